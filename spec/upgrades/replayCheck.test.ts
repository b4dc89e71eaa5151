// checkReplay(app, logic) and `loomwork replay-check`: stored journals replayed against a new logic with no
// effect run; per execution compatible or where it diverges; an exit code a CI gate reads.
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { ConfigError } from "../../actors/errors.js";
import { fsStores } from "../../adapters/fs/index.js";
import { memoryStores } from "../../stores/memory.js";
import type { Stores } from "../../stores/types.js";
import { cli } from "../cli/support.js";
import { countedEffects, flow, removeTempDirs, tempDir } from "./support.js";
import { checkReplay } from "../../upgrades.js";

afterAll(removeTempDirs);

// `parked-<i>` wait in `waiting` (before the branch a review step changes); `through-<i>` passed it.
async function journals(stores: Stores, count: number): Promise<void> {
  const { effects } = countedEffects();
  const app = createApp(defineConfig({ stores, effects }));
  for (let i = 0; i < count; i++) {
    const parked = await app.start(flow(), { executionId: `parked-${i}`, input: { name: `p${i}` } });
    await parked.settled();
    const through = await app.start(flow(), { executionId: `through-${i}`, input: { name: `t${i}` } });
    await through.settled();
    await through.sendAsync({ type: "CONTINUE" });
    await through.settled();
  }
  await app.close();
}

describe("checkReplay(app, logic)", () => {
  it("reports exactly the executions that diverge, with the seq and both values, running nothing", async () => {
    const stores = memoryStores();
    await journals(stores, 3);
    const counted = countedEffects();
    const app = createApp(defineConfig({ stores, effects: counted.effects }));
    expect(await checkReplay(app, flow())).toMatchObject({
      logicId: "flow",
      checked: 6,
      compatible: 6,
      diverged: 0,
      ok: true,
    });
    const report = await checkReplay(app, flow({ shape: "review" }));
    expect(report).toMatchObject({ checked: 6, compatible: 3, diverged: 3, unreadable: 0, ok: false });
    const diverged = report.results.filter((r) => r.status === "diverges");
    expect(diverged.map((r) => r.executionId).sort()).toEqual(["through-0", "through-1", "through-2"]);
    expect(diverged[0]).toMatchObject({
      seq: 6,
      journal: { type: "loom.transition", from: "waiting", to: "finishing" },
      produced: { type: "loom.transition", from: "waiting", to: "reviewing" },
    });
    expect(diverged[0]!.status === "diverges" && diverged[0]!.message).toMatch(
      /^diverges at seq 6: the journal has .*"to":"finishing".*, the logic produced .*"to":"reviewing"/,
    );
    expect(counted.total()).toBe(0);
    // Nothing was written: every log is as it was.
    for (const r of diverged) expect(await stores.events.head(r.executionId)).toBe(8);
    await app.close();
  });

  it("checks the named executions only, at most `limit`, streaming results and progress", async () => {
    const stores = memoryStores();
    await journals(stores, 2);
    const app = createApp(defineConfig({ stores, effects: countedEffects().effects }));
    const review = flow({ shape: "review" });
    expect(await checkReplay(app, review, { executionIds: ["parked-1", "through-1"] })).toMatchObject({
      checked: 2,
      diverged: 1,
    });
    expect(await checkReplay(app, review, { limit: 1 })).toMatchObject({ checked: 1 });
    const streamed: string[] = [];
    const progress: string[] = [];
    const report = await checkReplay(app, review, {
      onResult: (r) => streamed.push(`${r.executionId}:${r.status}`),
      onProgress: ({ checked, total }) => progress.push(`${checked}/${total}`),
    });
    expect(streamed).toHaveLength(4);
    expect(progress).toEqual(["1/4", "2/4", "3/4", "4/4"]);
    // Streamed, the report keeps only what is not compatible: memory bounded by the failures.
    expect(report.results.map((r) => r.status)).toEqual(["diverges", "diverges"]);
    await expect(checkReplay(app, review, { limit: -1 })).rejects.toThrow(ConfigError);
    await app.close();
  });

  it("reports an unknown id, an execution of another logic and a journal that fails to read, without stopping", async () => {
    const stores = memoryStores();
    await journals(stores, 1);
    const { effects } = countedEffects();
    const app = createApp(defineConfig({ stores, effects }));
    const other = flow({ version: "9" });
    const report = await checkReplay(app, other, { executionIds: ["nope", "parked-0"] });
    expect(report.results[0]).toMatchObject({ executionId: "nope", status: "unreadable" });
    expect(report.results[1]).toMatchObject({ executionId: "parked-0", status: "compatible" });
    const renamed = flow();
    Object.defineProperty(renamed, "id", { value: "renamed" });
    const mismatch = await checkReplay(app, renamed, { executionIds: ["parked-0"] });
    expect(mismatch.results[0]).toMatchObject({ status: "diverges", seq: 1 });
    await app.close();
  });
});

describe("loomwork replay-check", () => {
  it("prints the diverging executions with their seq and exits 1; exits 0 for a compatible logic", async () => {
    const dir = await tempDir("cli");
    const stores = await fsStores({ dir });
    await journals(stores, 2);
    await stores.close();

    const bad = await cli(["replay-check", "--logic", "spec/upgrades/cliLogics.ts#review", "--dir", dir]);
    expect(bad.code, bad.stdout + bad.stderr).toBe(1);
    expect(bad.stdout).toContain("through-0 diverges at seq 6: the journal has");
    expect(bad.stdout).toContain("through-1 diverges at seq 6");
    expect(bad.stdout).not.toContain("parked-");
    expect(bad.stdout).toContain("flow: 4 checked, 2 compatible");

    const good = await cli(["replay-check", "--logic", "spec/upgrades/cliLogics.ts#plain", "--dir", dir]);
    expect(good.code, good.stderr).toBe(0);

    const json = await cli([
      "replay-check",
      "through-1",
      "parked-0",
      "--logic",
      "spec/upgrades/cliLogics.ts#review",
      "--dir",
      dir,
      "--json",
    ]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ logicId: "flow", checked: 2, diverged: 1, ok: false }),
    ]);
    // --limit: the first n in the store's order (parked-0, parked-1), both compatible.
    const limited = await cli([
      "replay-check",
      "--logic",
      "spec/upgrades/cliLogics.ts#review",
      "--dir",
      dir,
      "--json",
      "--limit",
      "2",
    ]);
    expect(limited.code).toBe(0);
    expect(JSON.parse(limited.stdout)).toEqual([expect.objectContaining({ checked: 2, ok: true })]);

    const usage = await cli(["replay-check", "--dir", dir]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--logic");
  });
});
