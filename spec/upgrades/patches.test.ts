// Patching in place: `patched("greet")` guards a new branch. An execution journaled before the change
// replays through the old branch; a new one journals the marker once and takes the new branch; both
// across a process restart on fs. Then deprecatePatch, and the record's place in the fold.
import { assign, setup } from "xstate";
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { NonDeterminismError } from "../../actors/errors.js";
import { fsStores } from "../../adapters/fs/index.js";
import { patched, patchedValue, deprecatePatch, type PatchGuard } from "../../machines/helpers/patches.js";
import { memoryStores } from "../../stores/memory.js";
import { EVENT_RECEIVED, PATCH_MARKED, TRANSITION } from "../../stores/schema.js";
import type { JournalRecord, Stores } from "../../stores/types.js";
import { countedEffects, flow, patchedFlow, removeTempDirs, tempDir } from "./support.js";
import { checkReplay } from "../../upgrades.js";

afterAll(removeTempDirs);

type Logic = ReturnType<typeof flow>;

// Runs `executionId` on `logic` through CONTINUE (the patched branch point) and parks it in `closing`.
async function throughBranch(stores: Stores, logic: Logic, executionId: string): Promise<void> {
  const { effects } = countedEffects();
  const app = createApp(defineConfig({ stores, effects, logics: [logic] }));
  const actor = await app.start(logic, { executionId, input: { name: executionId } });
  await actor.settled();
  actor.send({ type: "CONTINUE" });
  await actor.settled();
  expect(actor.getSnapshot().value).toBe("closing");
  await app.close();
}

const markers = (log: JournalRecord[]) => log.filter((r) => r.type === PATCH_MARKED);

describe("patched(changeId)", () => {
  it("an old execution replays through the old branch, a new one journals the marker once and takes the new branch, across restarts", async () => {
    const dir = await tempDir("patched");
    // Before the change: the flow has no patch; "old" takes the only branch there is.
    let stores = await fsStores({ dir });
    await throughBranch(stores, flow(), "old");
    await stores.close();

    // The deploy with the patch: "new" starts on it.
    stores = await fsStores({ dir });
    await throughBranch(stores, patchedFlow(), "new");
    await stores.close();

    // A restart: both resume on the patched flow, each on its own branch, running nothing they journaled.
    stores = await fsStores({ dir });
    const counted = countedEffects();
    const app = createApp(defineConfig({ stores, effects: counted.effects, logics: [patchedFlow()] }));
    const old = await app.resume("old");
    const fresh = await app.resume("new");
    expect(counted.total()).toBe(0);
    // The context is rebuilt by the patched flow's old branch (its action notes "old path").
    expect(old.getSnapshot().context.trail).toEqual(["old", "done:prepare", "old path", "done:finish"]);
    expect(fresh.getSnapshot().context.trail).toEqual(["new", "done:prepare", "new path", "done:greet", "done:finish"]);
    old.send({ type: "CLOSE" });
    fresh.send({ type: "CLOSE" });
    expect(await app.result("old")).toEqual({ trail: ["old", "done:prepare", "old path", "done:finish"] });
    expect(await app.result("new")).toMatchObject({
      trail: ["new", "done:prepare", "new path", "done:greet", "done:finish"],
    });

    const oldLog = await app.log("old");
    const newLog = await app.log("new");
    expect(markers(oldLog)).toEqual([]);
    // Once per execution, right after the input record of the macrostep that first asked.
    expect(markers(newLog)).toHaveLength(1);
    const at = newLog.findIndex((r) => r.type === PATCH_MARKED);
    expect(newLog[at]).toMatchObject({ changeId: "greet" });
    expect(newLog[at - 1]).toMatchObject({ type: EVENT_RECEIVED, event: { type: "CONTINUE" } });
    expect(newLog[at + 1]).toMatchObject({ type: TRANSITION, from: "waiting", to: "greeting" });
    await app.close();
    await stores.close();

    // And once more after they ended: both replay, with and without their snapshots.
    stores = await fsStores({ dir });
    const report = await checkReplay(
      createApp(defineConfig({ stores, effects: countedEffects().effects })),
      patchedFlow(),
    );
    expect(report).toMatchObject({ checked: 2, compatible: 2, ok: true });
    await stores.close();
  });

  it("decides once per execution: later asks answer as the first, live or replayed, and journal nothing more", async () => {
    // A machine that asks on every PING: the new path counts "new", the old path "old".
    const pinger = (guard?: PatchGuard) =>
      setup({ types: {} as { context: { seen: string[] } } }).createMachine({
        id: "pinger",
        context: { seen: [] },
        on: {
          PING: guard
            ? [
                { guard, actions: assign({ seen: ({ context }) => [...context.seen, "new"] }) },
                { actions: assign({ seen: ({ context }) => [...context.seen, "old"] }) },
              ]
            : { actions: assign({ seen: ({ context }) => [...context.seen, "old"] }) },
        },
      });
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: {} }));
    const fresh = await app.start(pinger(patched("ping")), { executionId: "fresh" });
    const old = await app.start(pinger(), { executionId: "old" });
    for (const actor of [fresh, old]) {
      await actor.sendAsync({ type: "PING" });
      await actor.sendAsync({ type: "PING" });
    }
    await app.close();
    expect(markers(await app.log("fresh"))).toHaveLength(1);

    // After the upgrade, a live PING answers as the journal decided: new for "fresh", old for "old" (decided on replay).
    const next = createApp(defineConfig({ stores, effects: {}, logics: [pinger(patched("ping"))] }));
    for (const id of ["fresh", "old"]) await (await next.resume(id)).sendAsync({ type: "PING" });
    expect((await next.resume("fresh")).getSnapshot().context.seen).toEqual(["new", "new", "new"]);
    expect((await next.resume("old")).getSnapshot().context.seen).toEqual(["old", "old", "old"]);
    expect(markers(await next.log("fresh"))).toHaveLength(1);
    expect(markers(await next.log("old"))).toEqual([]);
    await next.close();
  });

  it("an execution journaled before the change that reaches it only after the upgrade takes the new path (its journal says nothing against it)", async () => {
    const stores = memoryStores();
    const { effects } = countedEffects();
    const before = createApp(defineConfig({ stores, effects }));
    await (await before.start(flow(), { executionId: "parked", input: { name: "p" } })).settled();
    await before.close();
    const after = createApp(defineConfig({ stores, effects, logics: [patchedFlow()] }));
    const actor = await after.resume("parked");
    actor.send({ type: "CONTINUE" });
    await actor.settled();
    expect(actor.getSnapshot().context.trail).toContain("new path");
    expect(markers(await after.log("parked"))).toHaveLength(1);
    await after.close();
  });

  it("is decided in the snapshot too: a resume from a snapshot past the marker keeps the new path", async () => {
    const stores = memoryStores();
    const { effects } = countedEffects();
    const config = { stores, effects, execution: { snapshotEvery: 1 } };
    const first = createApp(defineConfig({ ...config, logics: [patchedFlow()] }));
    const actor = await first.start(patchedFlow(), { executionId: "snap", input: { name: "s" } });
    await actor.settled();
    actor.send({ type: "CONTINUE" });
    await actor.settled();
    await first.close();
    const snapshot = await stores.events.getSnapshot("snap");
    expect(snapshot?.state).toMatchObject({ patches: { greet: true } });
    const second = createApp(defineConfig({ ...config, logics: [patchedFlow()] }));
    const resumed = await second.resume("snap");
    expect(resumed.replay.fromSnapshotSeq).toBeGreaterThan(0);
    expect(resumed.getSnapshot().context.trail).toContain("new path");
    await second.close();
  });

  it("outside a runtime's planning (a visualizer, a caller's own can()) answers the new path and journals nothing", () => {
    expect(patched("greet")()).toBe(true);
    expect(deprecatePatch("greet")()).toBe(true);
    expect(() => patched("")).toThrow(TypeError);
    expect(() => patched("no spaces")).toThrow(/letters, digits/);
  });

  it("is always a guard: a value form asked of patched() is refused with the name of patchedValue", () => {
    const asValue = patched as unknown as (changeId: string, ifPatched: number, otherwise: number) => unknown;
    expect(() => asValue("more-turns", 30, 10)).toThrow(/patchedValue\("more-turns", ifPatched, otherwise\)/);
    expect(patchedValue("more-turns", 30, 10)).toEqual({ changeId: "more-turns", ifPatched: 30, otherwise: 10 });
    expect(() => patchedValue("no spaces", 1, 2)).toThrow(/patchedValue\(changeId\)/);
  });

  it("a marker where a macrostep should start is refused as a record out of place", async () => {
    const stores = memoryStores();
    const { effects } = countedEffects();
    const app = createApp(defineConfig({ stores, effects, logics: [patchedFlow()] }));
    await (await app.start(patchedFlow(), { executionId: "tampered", input: { name: "x" } })).settled();
    await app.close();
    const head = await stores.events.head("tampered");
    await stores.events.append("tampered", head, [{ seq: head + 1, at: 0, type: PATCH_MARKED, changeId: "greet" }]);
    const next = createApp(defineConfig({ stores, effects, logics: [patchedFlow()] }));
    const refused = await next.resume("tampered").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NonDeterminismError);
    expect(refused).toMatchObject({ seq: head + 1, expected: PATCH_MARKED });
    await next.close();
  });
});

describe("deprecatePatch(changeId)", () => {
  it("replays the journals with the marker and those written after the deprecation; checkReplay names any journal from before the patch", async () => {
    const stores = memoryStores();
    await throughBranch(stores, flow(), "pre-patch");
    await throughBranch(stores, patchedFlow(), "patched");
    const deprecated = patchedFlow({ deprecated: true });
    await throughBranch(stores, deprecated, "deprecated");

    const counted = countedEffects();
    const app = createApp(defineConfig({ stores, effects: counted.effects, logics: [deprecated] }));
    for (const id of ["patched", "deprecated"]) {
      const actor = await app.resume(id);
      expect(actor.getSnapshot().context.trail).toContain("new path");
    }
    expect(counted.total()).toBe(0);
    // Written after the deprecation, it still journals the marker: a rollback to patched() replays it.
    expect(markers(await app.log("deprecated"))).toHaveLength(1);
    const rollback = await checkReplay(app, patchedFlow(), { executionIds: ["deprecated", "patched"] });
    expect(rollback.ok).toBe(true);

    // The precondition of a deprecation: no journal from before the patch remains. checkReplay says which one does.
    const gate = await checkReplay(app, deprecated);
    expect(gate).toMatchObject({ checked: 3, compatible: 2, diverged: 1, ok: false });
    expect(gate.results).toContainEqual(expect.objectContaining({ executionId: "pre-patch", status: "diverges" }));
    await app.close();
  });
});
