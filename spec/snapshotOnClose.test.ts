// A graceful shutdown (execution.snapshotOnClose: true): app.close() writes a snapshot at the head of each live
// execution whose last snapshot is behind it, so the next resume replays no tail; without a clean close (or
// by default) the tail is replayed as before. Memory and fs, the fs one reopened as a new process would.
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../adapters/fs/index.js";
import { createApp } from "../actors/app.js";
import { simulatedClock } from "../actors/clock.js";
import { defineConfig } from "../actors/config.js";
import { createToolEffect } from "../actors/effects/effect.js";
import { ConfigError } from "../actors/errors.js";
import { memoryStores } from "../stores/memory.js";
import type { Stores } from "../stores/types.js";
import { demoMachine } from "./support/demoMachine.js";
import { countedDemoEffects } from "./support/harness.js";
import { tempDirs } from "./support/tempDirs.js";

const { tempDir, removeTempDirs } = tempDirs("snapshot-on-close");
afterAll(removeTempDirs);

/** The demo's effects, with `write` hanging until `release` (a process stopped mid-call), counting its calls. */
function hangingWrite() {
  const { effects, runs } = countedDemoEffects();
  let calls = 0;
  return {
    runs,
    calls: () => calls,
    effects: {
      ...effects,
      write: createToolEffect(async () => {
        calls++;
        return new Promise<string>(() => undefined);
      }),
    },
  };
}

/** Runs the demo to its hanging `write` step (head 6 with the default snapshotEvery: no snapshot yet). */
async function runToWrite(stores: Stores, execution: { snapshotOnClose?: boolean } = { snapshotOnClose: true }) {
  const first = hangingWrite();
  const app = createApp(defineConfig({ stores, effects: first.effects, clock: simulatedClock(0), execution }));
  const actor = await app.start(demoMachine, { executionId: "r", input: { topic: "t" } });
  await actor.settled();
  await actor.sendAsync({ type: "APPROVE" });
  while (first.calls() === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  const head = (await stores.events.getExecution("r"))!.head;
  return { app, head };
}

async function resumeAndFinish(stores: Stores) {
  const { effects, runs } = countedDemoEffects();
  const app = createApp(defineConfig({ stores, effects, clock: simulatedClock(0), logics: [demoMachine] }));
  const actor = await app.resume("r");
  const result = await app.result("r");
  await app.close();
  return { replay: actor.replay, result, runs };
}

describe("a snapshot at a clean close (execution.snapshotOnClose: true)", () => {
  it("memory: close snapshots the live execution at its head; the resume replays nothing and re-runs only the stalled step", async () => {
    const stores = memoryStores();
    const { app, head } = await runToWrite(stores);
    expect(await stores.events.getSnapshot("r")).toBeUndefined();
    await app.close();
    expect((await stores.events.getSnapshot("r"))?.seq).toBe(head);
    const { replay, result, runs } = await resumeAndFinish(stores);
    expect(replay).toMatchObject({ fromSnapshotSeq: head, recordsReplayed: 0, stepsToRun: 1 });
    expect(result).toEqual({ notes: ["notes on t", "draft(notes on t)"], approved: true });
    expect([...runs.keys()]).toEqual([expect.stringContaining("write")]);
  });

  it("fs: the snapshot written at close is what a new fsStores over the directory resumes from", async () => {
    const dir = await tempDir("fs");
    const stores = await fsStores({ dir });
    const { app, head } = await runToWrite(stores);
    await app.close();
    await stores.close();
    const reopened = await fsStores({ dir });
    expect((await reopened.events.getSnapshot("r"))?.seq).toBe(head);
    const { replay, result } = await resumeAndFinish(reopened);
    await reopened.close();
    expect(replay).toMatchObject({ fromSnapshotSeq: head, recordsReplayed: 0, stepsToRun: 1 });
    expect(result).toMatchObject({ approved: true });
  });

  it("by default (or with false) the close writes none: the resume replays the tail from the start", async () => {
    const stores = memoryStores();
    const { app, head } = await runToWrite(stores, {});
    await app.close();
    expect(await stores.events.getSnapshot("r")).toBeUndefined();
    const { replay, result } = await resumeAndFinish(stores);
    expect(replay).toMatchObject({ fromSnapshotSeq: 0, recordsReplayed: head, stepsToRun: 1 });
    expect(result).toMatchObject({ approved: true });
  });

  it("an app that never closed (a crash) leaves the tail to replay", async () => {
    const stores = memoryStores();
    const { head } = await runToWrite(stores);
    const { replay, result } = await resumeAndFinish(stores);
    expect(replay).toMatchObject({ fromSnapshotSeq: 0, recordsReplayed: head, stepsToRun: 1 });
    expect(result).toMatchObject({ approved: true });
  });

  it("writes nothing at close for an ended execution or one whose snapshot is at its head", async () => {
    const stores = memoryStores();
    const { effects } = countedDemoEffects();
    const app = createApp(
      defineConfig({
        stores,
        effects,
        clock: simulatedClock(0),
        execution: { snapshotEvery: 5, snapshotOnClose: true },
      }),
    );
    const actor = await app.start(demoMachine, { executionId: "r", input: { topic: "t" } });
    await actor.settled();
    const before = await stores.events.getSnapshot("r");
    expect(before?.seq).toBe((await stores.events.getExecution("r"))!.head);
    await app.close();
    expect(await stores.events.getSnapshot("r")).toEqual(before);
  });

  it("refuses a snapshotOnClose that is not a boolean", () => {
    expect(() =>
      createApp(
        defineConfig({
          stores: memoryStores(),
          effects: {},
          execution: { snapshotOnClose: "yes" as unknown as boolean },
        }),
      ),
    ).toThrow(ConfigError);
  });
});
