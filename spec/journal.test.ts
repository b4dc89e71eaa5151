// The journal's write-ahead contract: what is appended, in what order, in how many writes.
import { describe, expect, it } from "vitest";
import { createApp } from "../actors/app.js";
import { simulatedClock } from "../actors/clock.js";
import { defineConfig } from "../actors/config.js";
import { MemoryEventStore, memoryStores } from "../stores/memory.js";
import {
  EVENT_RECEIVED,
  EVENT_SCHEMA,
  EXECUTION_ENDED,
  EXECUTION_STARTED,
  STEP_COMPLETED,
  TIMER_SET,
  TRANSITION,
} from "../stores/schema.js";
import type { StoredRecord } from "../stores/types.js";
import { demoMachine, failingBoom, fragileMachine } from "./support/demoMachine.js";
import { countedDemoEffects, withEvents } from "./support/harness.js";

class RecordingStore extends MemoryEventStore {
  writes: StoredRecord[][] = [];
  override async append(id: string, expected: number, records: StoredRecord[]) {
    this.writes.push(records);
    return super.append(id, expected, records);
  }
}

describe("the journal", () => {
  it("writes one batch per macrostep: the input first, then timers, the TRANSITION and the end", async () => {
    const events = new RecordingStore();
    const clock = simulatedClock(100);
    const { effects } = countedDemoEffects();
    const app = createApp(defineConfig({ stores: withEvents(memoryStores(), events), effects, clock }));
    const actor = await app.start(demoMachine, { executionId: "r", subject: "user-1", input: { topic: "owls" } });
    await actor.settled();
    await actor.sendAsync({ type: "APPROVE" });
    await actor.settled();
    expect(events.writes.map((batch) => batch.map((r) => r.type))).toEqual([
      [EXECUTION_STARTED, TRANSITION],
      [STEP_COMPLETED, TIMER_SET, TRANSITION],
      [EVENT_RECEIVED, TRANSITION],
      [STEP_COMPLETED, TRANSITION, EXECUTION_ENDED],
    ]);
    const log = await app.log("r");
    expect(log[0]).toMatchObject({
      seq: 1,
      at: 100,
      type: EXECUTION_STARTED,
      logicId: "demo",
      subject: "user-1",
      input: { topic: "owls" },
      schema: EVENT_SCHEMA.version,
    });
    expect(log.filter((r) => r.type === TRANSITION).map((r) => [r.from, r.to, r.event])).toEqual([
      [null, "researching", "xstate.init"],
      ["researching", "waiting", "xstate.done.actor.research"],
      ["waiting", "writing", "APPROVE"],
      ["writing", "done", "xstate.done.actor.write"],
    ]);
    expect(log.find((r) => r.type === STEP_COMPLETED)).toMatchObject({
      stepId: "demo#research:1",
      effectId: "research",
      output: "notes on owls",
    });
    expect((await events.getExecution("r"))?.status).toBe("done");
  });

  it("appends an external event before the machine sees it", async () => {
    const stores = memoryStores();
    const { effects } = countedDemoEffects();
    const app = createApp(defineConfig({ stores, effects }));
    const actor = await app.start(demoMachine, { executionId: "r", input: { topic: "t" } });
    await actor.settled();
    const seen: string[] = [];
    actor.subscribe(async (snapshot) => {
      const logged = (await stores.events.read("r")).some((r) => r.type === EVENT_RECEIVED);
      seen.push(`${String(snapshot.value)}:${logged}`);
    });
    await actor.sendAsync({ type: "REJECT" });
    await actor.settled();
    expect(seen[0]).toBe("writing:true");
  });

  it("journals an effect's failure and lets the machine handle it", async () => {
    const stores = memoryStores();
    const { effects } = countedDemoEffects({ failWrite: true });
    const app = createApp(defineConfig({ stores, effects }));
    const actor = await app.start(demoMachine, { executionId: "r", input: { topic: "t" } });
    await actor.settled();
    await actor.sendAsync({ type: "APPROVE" });
    expect(await app.result("r")).toEqual({ notes: ["notes on t", "write failed"], approved: true });
    const failed = (await app.log("r")).find((r) => r.type === "loom.step.failed");
    expect(failed).toMatchObject({ stepId: "demo#write:1", error: { name: "Error", message: "disk full" } });
  });

  it("ends the execution visibly when an effect fails and the machine does not handle it", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: failingBoom }));
    await app.start(fragileMachine, { executionId: "f" });
    await expect(app.result("f")).rejects.toMatchObject({
      name: "ExecutionFailedError",
      error: { name: "TypeError", message: "nope" },
    });
    expect((await app.log("f")).at(-1)).toMatchObject({
      type: EXECUTION_ENDED,
      status: "error",
      error: { message: "nope" },
    });
  });

  it("takes snapshots every N records and resumes from the latest one plus the tail", async () => {
    const stores = memoryStores();
    const clock = simulatedClock(0);
    const { effects } = countedDemoEffects();
    const app = createApp(defineConfig({ stores, effects, clock, execution: { snapshotEvery: 4 } }));
    const actor = await app.start(demoMachine, { executionId: "r", input: { topic: "t" } });
    await actor.settled();
    await app.close();
    const snapshot = await stores.events.getSnapshot("r");
    expect(snapshot?.seq).toBe(5);
    const app2 = createApp(defineConfig({ stores, effects, clock, logics: [demoMachine] }));
    const resumed = await app2.resume("r");
    expect(resumed.replay).toMatchObject({ fromSnapshotSeq: 5, recordsReplayed: 0 });
    expect(resumed.getSnapshot().value).toBe("waiting");
    await resumed.sendAsync({ type: "APPROVE" });
    expect(await app2.result("r")).toMatchObject({ approved: true });
  });

  it("reports sizes: records, log bytes and state bytes", async () => {
    const { effects } = countedDemoEffects();
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects }));
    const actor = await app.start(demoMachine, { executionId: "r", input: { topic: "t" } });
    await actor.settled();
    const stats = await app.stats("r");
    const log = await app.log("r");
    expect(stats.records).toBe(log.length);
    // The bytes the store holds: the stored form (schema 3), smaller than the read form app.log returns.
    const bytesOf = (records: unknown[]) =>
      records.reduce<number>((n, r) => n + new TextEncoder().encode(JSON.stringify(r)).length, 0);
    expect(stats.logBytes).toBe(bytesOf(await stores.events.read("r")));
    expect(stats.logBytes).toBeLessThan(bytesOf(log));
    expect(stats.stateBytes).toBeGreaterThan(0);
  });
});

describe("a stopped execution", () => {
  it("resumes in a fresh app as stopped: result() rejects, nothing runs", async () => {
    const stores = memoryStores();
    const first = countedDemoEffects();
    const app1 = createApp(defineConfig({ stores, effects: first.effects }));
    const actor = await app1.start(demoMachine, { executionId: "s", input: { topic: "t" } });
    await actor.settled();
    await app1.stop("s", "user cancelled");
    await expect(app1.result("s")).rejects.toMatchObject({ name: "ExecutionStoppedError" });
    const second = countedDemoEffects();
    const app2 = createApp(defineConfig({ stores, effects: second.effects, logics: [demoMachine] }));
    const resumed = await app2.resume("s");
    expect(resumed.getSnapshot().status).toBe("stopped");
    await expect(app2.result("s")).rejects.toThrow(/user cancelled/);
    expect(second.runs.size).toBe(0);
    expect((await app2.stats("s")).records).toBe((await stores.events.read("s")).length);
  });
});

describe("getSnapshot", () => {
  // useSyncExternalStore (React, @xstate/react's useSelector) requires the same object until the state
  // changes; a new one per call makes React log "getSnapshot should be cached" and loop.
  it("returns the same object on every call until the state changes, for every status", async () => {
    const { effects } = countedDemoEffects();
    const app = createApp(defineConfig({ stores: memoryStores(), effects: { ...effects, ...failingBoom } }));
    const running = await app.start(demoMachine, { executionId: "running", input: { topic: "t" } });
    await running.settled();
    const stopped = await app.start(demoMachine, { executionId: "stopped", input: { topic: "t" } });
    await stopped.settled();
    await app.stop("stopped");
    const failed = await app.start(fragileMachine, { executionId: "failed" });
    await app.result("failed").catch(() => undefined);
    const done = await app.start(demoMachine, { executionId: "done", input: { topic: "t" } });
    await done.settled();
    await done.sendAsync({ type: "APPROVE" });
    await app.result("done");
    const statuses = [running, stopped, failed, done].map((actor) => {
      const first = actor.getSnapshot();
      expect(actor.getSnapshot(), actor.id).toBe(first);
      return first.status;
    });
    expect(statuses).toEqual(["active", "stopped", "error", "done"]);
    const before = running.getSnapshot();
    await running.sendAsync({ type: "APPROVE" });
    await app.result("running");
    expect(running.getSnapshot()).not.toBe(before);
    expect(running.getSnapshot()).toBe(running.getSnapshot());
  });
});

describe("app.stats", () => {
  it("measures an execution this app is not running without resuming it: no effect runs, no actor starts", async () => {
    const stores = memoryStores();
    const first = countedDemoEffects();
    const app1 = createApp(defineConfig({ stores, effects: first.effects }));
    const actor = await app1.start(demoMachine, { executionId: "m", input: { topic: "t" } });
    await actor.settled();
    await actor.sendAsync({ type: "APPROVE" });
    const before = (await stores.events.read("m")).length;
    await app1.close(); // "write" was in flight: a resume would run it again
    const second = countedDemoEffects();
    const app2 = createApp(defineConfig({ stores, effects: second.effects, logics: [demoMachine] }));
    const stats = await app2.stats("m");
    expect(stats.records).toBe(before);
    expect(stats.stateBytes).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(second.runs.size).toBe(0);
    expect((await stores.events.read("m")).length).toBe(before);
  });
});
