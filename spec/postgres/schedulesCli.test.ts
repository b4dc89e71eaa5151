// `loomwork schedules --postgres` against a live fleet: workers fire a 1-second schedule while a spawned CLI process
// (as a user runs it) lists it with its last tick and that tick's execution, pauses it (no tick starts while paused),
// resumes it (the ticks it missed start, catchUp "all") and deletes it (nothing more starts).
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createToolEffect } from "../../actors/effects/effect.js";
import type { StoredSchedule } from "../../stores/types.js";
import { getSchedule, schedule } from "../../schedules.js";
import { cli } from "../cli/support.js";
import { stamped } from "./scheduleFleet.js";
import { startPostgres, type PgServer } from "./server.js";
import { startFleet } from "./workers.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

const SECOND = 1_000;
const WAIT = { timeout: 30_000, interval: 50 };
const tickTime = (id: string) => Date.parse(id.slice("sched:every-second:".length));

describe("loomwork schedules on a live fleet", () => {
  it("lists a fleet's schedules with their last tick's execution; pause, resume and delete take effect on the workers", async () => {
    const f = await startFleet(server, {
      name: "schedcli",
      workers: 2,
      logics: [stamped],
      effects: { stamp: createToolEffect(async (input: unknown) => ({ stamped: input })) },
    });
    const ticks = async () =>
      (await f.app.executions())
        .map((e) => e.executionId)
        .filter((id) => id.startsWith("sched:every-second:"))
        .sort();
    const args = ["--postgres", server.url, "--schema", f.schema];
    const listed = async () => {
      const json = await cli(["schedules", ...args, "--json"]);
      expect(json.code, json.stderr).toBe(0);
      return JSON.parse(json.stdout) as StoredSchedule[];
    };
    try {
      const stored = await schedule(f.app, stamped, {
        id: "every-second",
        every: SECOND,
        overlap: "allow",
        catchUp: "all",
      });
      await schedule(f.app, stamped, { id: "nightly", cron: "0 3 * * *", timezone: "Europe/Paris" });
      // Two ticks started, and a worker wrote the schedule past them.
      await vi.waitFor(async () => expect((await getSchedule(f.app, "every-second"))?.lastTick).toBeDefined(), WAIT);
      await vi.waitFor(async () => expect((await ticks()).length).toBeGreaterThanOrEqual(2), WAIT);

      // The listing is the workers' writes: the last tick and its execution, which exists on the fleet.
      const rows = await listed();
      expect(rows.map((s) => s.id)).toEqual(["every-second", "nightly"]);
      const every = rows[0]!;
      expect(every).toMatchObject({ logicId: "stamped", spec: { every: SECOND }, paused: false });
      expect(every.lastTick!.executionId).toBe(`sched:every-second:${new Date(every.lastTick!.at).toISOString()}`);
      expect(await ticks()).toContain(every.lastTick!.executionId);
      expect(every.nextAt).toBe(every.lastTick!.at + SECOND);
      expect(rows[1]).toMatchObject({ spec: { cron: "0 3 * * *", timezone: "Europe/Paris" }, paused: false });
      expect(rows[1]!.lastTick).toBeUndefined();
      const text = await cli(["schedules", ...args, "--no-color"]);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/every-second\s+stamped\s+every 1000 ms\s+—/);
      expect(text.stdout).toMatch(/sched:every-second:\S+\s+active/);
      expect(text.stdout).toMatch(/nightly\s+stamped\s+0 3 \* \* \*\s+Europe\/Paris/);

      // Paused: no tick due after the pause starts, whichever worker looks (one decided before it may still land).
      expect(await cli(["schedules", "pause", "every-second", ...args])).toMatchObject({
        code: 0,
        stdout: "paused schedule every-second\n",
      });
      const pausedAt = Date.now();
      const { nextAt } = (await getSchedule(f.app, "every-second"))!;
      expect((await listed())[0]).toMatchObject({ paused: true, nextAt });
      await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(Math.max(nextAt!, pausedAt) + 2 * SECOND), WAIT);
      const whilePaused = (await ticks()).length;
      expect(Math.max(...(await ticks()).map(tickTime))).toBeLessThanOrEqual(pausedAt);

      // Resumed: the ticks missed while paused start (catchUp "all"), then the schedule goes on.
      expect(await cli(["schedules", "resume", "every-second", ...args])).toMatchObject({ code: 0 });
      await vi.waitFor(async () => expect((await ticks()).length).toBeGreaterThanOrEqual(whilePaused + 3), WAIT);

      // Deleted: nothing more starts; the executions it started stay.
      expect(await cli(["schedules", "delete", "every-second", ...args])).toMatchObject({ code: 0 });
      expect((await listed()).map((s) => s.id)).toEqual(["nightly"]);
      const deletedAt = Date.now();
      await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(deletedAt + 2 * SECOND), WAIT);
      const times = (await ticks()).map(tickTime);
      expect(Math.max(...times)).toBeLessThanOrEqual(deletedAt);
      // Every tick from the first to the last once, the paused ones included.
      expect(times[0]).toBe(stored.nextAt);
      expect(times.map((t) => t - times[0]!)).toEqual(times.map((_, i) => i * SECOND));

      const missing = await cli(["schedules", "delete", "every-second", ...args]);
      expect(missing.code).toBe(3);
      expect(missing.stderr).toContain('no schedule "every-second"');
    } finally {
      await f.close();
    }
  }, 120_000);
});
