// `loomwork schedules` over a journal directory: lists the stored schedules, pauses, resumes and deletes one.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { simulatedClock } from "../../actors/clock.js";
import { fsStores } from "../../adapters/fs/index.js";
import { schedule } from "../../schedules.js";
import { cli } from "../cli/support.js";
import { appOn, quick } from "./harness.js";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

describe("loomwork schedules", () => {
  it("lists, pauses, resumes and deletes the schedules of a journal directory", async () => {
    const dir = await mkdtemp(join(tmpdir(), "loomwork-schedules-cli-"));
    dirs.push(dir);
    const stores = await fsStores({ dir });
    const app = appOn(stores, simulatedClock(Date.parse("2026-06-01T00:00:00Z")));
    await schedule(app, quick, { id: "nightly", cron: "0 3 * * *", timezone: "Europe/Paris" });
    await schedule(app, quick, { id: "minutely", every: 60_000 });
    await app.close();
    await stores.close();

    const listed = await cli(["schedules", "--dir", dir, "--no-color"]);
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    expect(listed.stdout).toMatch(
      /SCHEDULE\s+LOGIC\s+SPEC\s+TIMEZONE\s+NEXT TICK\s+LAST TICK\s+LAST EXECUTION\s+STATE/,
    );
    expect(listed.stdout).toMatch(/minutely\s+quick\s+every 60000 ms\s+—/);
    expect(listed.stdout).toMatch(/nightly\s+quick\s+0 3 \* \* \*\s+Europe\/Paris/);

    expect(await cli(["schedules", "pause", "nightly", "--dir", dir])).toMatchObject({
      code: 0,
      stdout: "paused schedule nightly\n",
    });
    const json = await cli(["schedules", "--dir", dir, "--json"]);
    expect(
      (JSON.parse(json.stdout) as { id: string; paused: boolean; nextAt: number }[]).map((s) => [s.id, s.paused]),
    ).toEqual([
      ["minutely", false],
      ["nightly", true],
    ]);
    expect(await cli(["schedules", "resume", "nightly", "--dir", dir])).toMatchObject({ code: 0 });
    expect(await cli(["schedules", "delete", "minutely", "--dir", dir])).toMatchObject({ code: 0 });
    const after = JSON.parse((await cli(["schedules", "--dir", dir, "--json"])).stdout) as {
      id: string;
      paused: boolean;
    }[];
    expect(after.map((s) => [s.id, s.paused])).toEqual([["nightly", false]]);

    const missing = await cli(["schedules", "delete", "minutely", "--dir", dir]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('no schedule "minutely"');
    expect((await cli(["schedules", "pause", "--dir", dir])).code).toBe(2);
    expect((await cli(["schedules", "stop", "x", "--dir", dir])).code).toBe(2);
  }, 120_000);
});
