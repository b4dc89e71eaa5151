// Archive segments and retention: the kernel parts the sweep and erasure assume.
import { describe, expect, it } from "vitest";
import { ConfigError, UnknownExecutionError } from "../../actors/errors.js";
import { HistoryInUseError } from "../../actors/lifecycle/retention.js";
import { isSealed } from "../../stores/recordSealing.js";
import { EXECUTION_STARTED } from "../../stores/schema.js";
import type { EventStore } from "../../stores/types.js";
import { offloaded, rejection, runAgent, world } from "./support.js";
import { archive, sweep } from "../../lifecycle.js";

/** The EventStore with its readArchives calls counted. */
function countingArchives(events: EventStore) {
  const counter = { reads: 0 };
  const store = new Proxy(events, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      if (prop === "readArchives") return (id: string) => (counter.reads++, target.readArchives(id));
      return value.bind(target);
    },
  });
  return { store, counter };
}

describe("archive segments: archive(app, executionId, { throughSeq? })", () => {
  it("by default archives through the latest snapshot, so a resume never needs an archived record", async () => {
    const w = world({ snapshotEvery: 4 });
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    const snapshot = (await w.stores.events.getSnapshot("a1"))!;
    const result = await archive(app, "a1");
    expect(result).toEqual({
      executionId: "a1",
      segment: { fromSeq: 1, toSeq: snapshot.seq },
      snapshotSeq: snapshot.seq,
    });
    expect((await w.stores.events.read("a1")).every((r) => r.seq > snapshot.seq)).toBe(true);
    expect((await w.stores.events.readArchives("a1"))[0]!.records[0]!.type).toBe(EXECUTION_STARTED);
    // A fresh app resumes without reading a segment; app.log still shows the whole history.
    const { store, counter } = countingArchives(w.stores.events);
    const actor = await w.app({ events: store }).resume("a1");
    expect(actor.getSnapshot().status).toBe("done");
    expect(counter.reads).toBe(0);
    expect((await app.log("a1"))[0]!.seq).toBe(1);
  });

  it("takes a snapshot first when there is none (or none past what is archived)", async () => {
    const w = world({ snapshotEvery: false });
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    expect(await w.stores.events.getSnapshot("a1")).toBeUndefined();
    const head = (await w.stores.events.getExecution("a1"))!.head;
    const result = await archive(app, "a1");
    expect(result.segment).toEqual({ fromSeq: 1, toSeq: head });
    expect((await w.stores.events.getSnapshot("a1"))!.seq).toBe(head);
    expect(await w.stores.events.read("a1")).toEqual([]);
    const actor = await w.app().resume("a1");
    expect(actor.getSnapshot().output).toMatchObject({ text: "done" });
    // Nothing new to archive: no segment.
    expect((await archive(app, "a1")).segment).toBeUndefined();
  });

  it("archives through an explicit throughSeq, and refuses one outside the log", async () => {
    const w = world({ snapshotEvery: false });
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    expect((await archive(app, "a1", { throughSeq: 3 })).segment).toEqual({ fromSeq: 1, toSeq: 3 });
    expect((await archive(app, "a1", { throughSeq: 5 })).segment).toEqual({ fromSeq: 4, toSeq: 5 });
    expect(await rejection(archive(app, "a1", { throughSeq: 10_000 }))).toBeInstanceOf(ConfigError);
    expect(await rejection(archive(app, "nope"))).toBeInstanceOf(UnknownExecutionError);
  });

  it("a sealed execution's segments stay sealed, and the app opens them", async () => {
    const w = world({ crypto: true });
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    await archive(app, "a1");
    const segment = (await w.stores.events.readArchives("a1"))[0]!;
    expect(segment.records.every(isSealed)).toBe(true);
    expect((await app.log("a1"))[0]).toMatchObject({ type: EXECUTION_STARTED, input: { prompt: "work for A" } });
  });
});

describe("retention: app.deleteHistory(executionId)", () => {
  it("deletes the whole history; the blobs only it cited become reclaimable by the next sweep", async () => {
    const w = world();
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    await archive(app, "a1");
    const { fetch } = await offloaded(app, "a1");
    expect((await sweep(app, { ttlMs: 0 })).deleted).toBe(0);
    await app.deleteHistory("a1");
    expect(await w.stores.events.getExecution("a1")).toBeUndefined();
    expect(await w.stores.events.readArchives("a1")).toEqual([]);
    expect(await w.stores.events.getSnapshot("a1")).toBeUndefined();
    expect((await sweep(app, { ttlMs: 0 })).deleted).toBe(1);
    expect(await w.content.has(fetch!)).toBe(false);
  });

  it("refuses an execution running in this app (stop it first)", async () => {
    let release!: () => void;
    let arrive!: () => void;
    const parked = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<void>((resolve) => (arrive = resolve));
    const w = world({ beforeAnswer: () => (arrive(), parked) });
    const app = w.app();
    const run = runAgent(app, "a1", "A", ["fetch"]).catch((error: unknown) => error);
    await reached; // the run is parked in its last model call
    expect(await rejection(app.deleteHistory("a1"))).toBeInstanceOf(HistoryInUseError);
    await app.stop("a1");
    release();
    expect(String(await run)).toMatch(/stopped/);
    await app.deleteHistory("a1");
    expect(await w.stores.events.getExecution("a1")).toBeUndefined();
  });
});
