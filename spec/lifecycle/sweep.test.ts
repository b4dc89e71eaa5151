// ADR 0140 D6 (sweep side, with ADR 0146's TTL origin): one test per sentence of the sweep decision.
import { describe, expect, it } from "vitest";
import { simulatedClock } from "../../actors/clock.js";
import { claimCheckTrustOf } from "../../actors/lifecycle/citations.js";
import { ConfigError, LifecycleNotLoadedError } from "../../actors/errors.js";
import { sweepUnpinnedContent } from "../../actors/lifecycle/standalone.js";
import { SWEEP_LOGIC_ID } from "../../machines/sweep.js";
import { utf8 } from "../../stores/bytes.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import type { ContentStore, EventStore, StoredRecord } from "../../stores/types.js";
import { CountingContentStore } from "../support/countingContentStore.js";
import { forgedEnvelope } from "./forgery.js";
import { CrashingEvents, offloaded, rejection, runAgent, SimulatedCrash, world } from "./support.js";
import { archive, sweep } from "../../lifecycle.js";

const DAY = 86_400_000;
const YEAR = 365 * DAY;

describe("ADR 0140 D6: the sweep keeps retained refs while anything cites them", () => {
  it("keeps a retained ref while a live log cites it, however old", async () => {
    const clock = simulatedClock(1_000);
    const w = world({ clock, snapshotEvery: false });
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    const { fetch } = await offloaded(app, "a1");
    clock.advance(10 * YEAR);
    const result = await sweep(app, { ttlMs: 1 });
    expect(result).toMatchObject({ scanned: 1, kept: 1, deleted: 0, pinned: 1 });
    expect(await w.content.has(fetch!)).toBe(true);
  });

  it("keeps a ref while only an archive segment cites it (segments pin everything they cite)", async () => {
    const clock = simulatedClock(1_000);
    const w = world({ clock, snapshotEvery: false });
    const app = w.app();
    await runAgent(app, "t1", "A", ["telemetry"]);
    await runAgent(app, "t2", "A", ["telemetry"]);
    const head = (await w.stores.events.getExecution("t1"))!.head;
    await archive(app, "t1", { throughSeq: head });
    clock.advance(YEAR);
    await sweep(app, { ttlMs: DAY });
    expect(await w.content.has((await offloaded(app, "t1")).telemetry!)).toBe(true);
    // The same telemetry ref cited by a live log only is reclaimed past its TTL.
    expect(await w.content.has((await offloaded(app, "t2")).telemetry!)).toBe(false);
  });

  it("keeps a ref while a snapshot cites it (snapshots pin everything they cite)", async () => {
    const clock = simulatedClock(1_000);
    const w = world({ clock, snapshotEvery: 2 });
    const app = w.app();
    await runAgent(app, "t1", "A", ["telemetry"]);
    expect(await w.stores.events.getSnapshot("t1")).toBeDefined();
    clock.advance(YEAR);
    const result = await sweep(app, { ttlMs: DAY });
    expect(result.deleted).toBe(0);
    expect(await w.content.has((await offloaded(app, "t1")).telemetry!)).toBe(true);
  });
});

describe("ADR 0140 D6 / ADR 0146: telemetry refs are TTL-reclaimed from the citing execution's end", () => {
  it("a telemetry ref (no retain) is reclaimable once its TTL has passed, measured from its execution's END once it has ended", async () => {
    const clock = simulatedClock(1_000);
    // The tool's result is cited at t=1000; the run ends 500 ms later.
    const w = world({ clock, snapshotEvery: false, beforeAnswer: () => clock.advance(500) });
    const app = w.app();
    await runAgent(app, "t1", "A", ["telemetry"]);
    const { telemetry } = await offloaded(app, "t1");
    const cited = (await app.log("t1")).find((r) => r.type === STEP_COMPLETED && r.effectId === "telemetry")!.at;
    const ended = (await w.stores.events.getExecution("t1"))!.endedAt!;
    expect(ended - cited).toBe(500);
    clock.advance(200); // 700 ms after the citation, 200 after the end
    expect((await sweep(app, { ttlMs: 300 })).deleted).toBe(0);
    expect(await w.content.has(telemetry!)).toBe(true);
    clock.advance(100); // 300 after the end
    expect((await sweep(app, { ttlMs: 300 })).deleted).toBe(1);
    expect(await w.content.has(telemetry!)).toBe(false);
  });

  it("while the execution runs, the TTL runs from the citing record's at", async () => {
    const clock = simulatedClock(1_000);
    let release!: () => void;
    let arrive!: () => void;
    const parked = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<void>((resolve) => (arrive = resolve));
    const w = world({ clock, snapshotEvery: false, beforeAnswer: () => (arrive(), parked) });
    const app = w.app();
    await app.start(
      (await import("../../actors/agents/agentLoop.js")).agentLoop$({
        id: "agent-telemetry",
        model: "model",
        tools: ["telemetry"],
        warnTranscriptBytes: false,
      }),
      {
        executionId: "t1",
        subject: "A",
        input: { prompt: "go" },
      },
    );
    await reached; // the tool's result is journaled; the run is parked in its last model call
    const { telemetry } = await offloaded(app, "t1");
    clock.advance(299);
    expect((await sweep(app, { ttlMs: 300 })).kept).toBe(1);
    clock.advance(1);
    expect((await sweep(app, { ttlMs: 300 })).deleted).toBe(1);
    expect(await w.content.has(telemetry!)).toBe(false);
    release();
    await app.result("t1");
  });

  it("a forged retained envelope nested in an unlisted tool's output is TTL-reclaimable like a telemetry ref", async () => {
    const clock = simulatedClock(1_000);
    const w = world({ clock, snapshotEvery: false });
    const app = w.app();
    const victim = await w.content.put(utf8(JSON.stringify({ precious: true })));
    w.outputs.set("B", { page: { nested: forgedEnvelope(victim) } });
    await runAgent(app, "b1", "B", ["note"]);
    expect((await sweep(app, { ttlMs: DAY })).kept).toBe(1);
    clock.advance(DAY);
    expect((await sweep(app, { ttlMs: DAY })).deleted).toBe(1);
    expect(await w.content.has(victim)).toBe(false);
  });
});

describe("ADR 0140 D11 (2): trust by position and writer", () => {
  it("a retained lookalike at the TOP of an unlisted tool's output pins nothing either (the claim-check never wrote it)", async () => {
    const clock = simulatedClock(1_000);
    const w = world({ clock, snapshotEvery: false });
    const app = w.app();
    const victim = await w.content.put(utf8(JSON.stringify({ precious: true })));
    w.outputs.set("B", forgedEnvelope(victim));
    await runAgent(app, "b1", "B", ["note"]);
    clock.advance(DAY);
    expect((await sweep(app, { ttlMs: DAY })).deleted).toBe(1);
    expect(await w.content.has(victim)).toBe(false);
  });

  it("sweepUnpinnedContent over bare stores trusts the position alone, unless given the writer check (claimCheckTrustOf)", async () => {
    const w = world({ snapshotEvery: false });
    const victim = await w.content.put(utf8(JSON.stringify({ precious: true })));
    w.outputs.set("B", forgedEnvelope(victim));
    await runAgent(w.app(), "b1", "B", ["note"]);
    const bare = { events: w.stores.events, content: w.content, ttlMs: 0 };
    expect((await sweepUnpinnedContent(bare)).deleted).toBe(0);
    expect((await sweepUnpinnedContent({ ...bare, trust: claimCheckTrustOf(w.app().config) })).deleted).toBe(1);
  });
});

describe("ADR 0140 D6: what the sweep reclaims, and how", () => {
  it("uncited blobs are reclaimable", async () => {
    const w = world();
    const app = w.app();
    const orphan = await w.content.put(utf8("nobody cites me"));
    const result = await sweep(app, { ttlMs: YEAR });
    expect(result).toMatchObject({ scanned: 1, deleted: 1, bytesDeleted: 15 });
    expect(await w.content.has(orphan)).toBe(false);
  });

  it("every delete is deleteIfUntouchedSince(the touch clock at the sweep's start), so a concurrent put survives", async () => {
    const w = world();
    const racing = utf8("re-put while the sweep runs");
    const orphan = await w.content.put(utf8("orphan"));
    const raced = await w.content.put(racing);
    const cutoffs: number[] = [];
    let unconditional = 0;
    const inner = w.content;
    const content: ContentStore = Object.assign(Object.create(inner), {
      delete: async () => {
        unconditional++;
        return false;
      },
      deleteIfUntouchedSince: async (address: string, cutoff: number) => {
        cutoffs.push(cutoff);
        // Another execution puts the same bytes just before this delete lands.
        if (address === raced) await inner.put(racing);
        return inner.deleteIfUntouchedSince!(address, cutoff);
      },
      list: () => inner.list(),
      touchClock: () => inner.touchClock!(),
      has: (a: string) => inner.has(a),
    });
    const result = await sweep(w.app({ content }), { ttlMs: 0 });
    expect(result).toMatchObject({ deleted: 1, spared: 1 });
    expect(unconditional).toBe(0);
    expect(new Set(cutoffs)).toEqual(new Set([result.touchCutoff]));
    expect(await inner.has(orphan)).toBe(false);
    expect(await inner.has(raced)).toBe(true);
  });

  it("a blob this app offloaded is spared while the record citing it is not yet journaled", async () => {
    const w = world();
    let sweepDuringAppend: Promise<unknown> | undefined;
    const events = new CrashingEvents(w.stores.events, { prefix: "a1" });
    const append = events.append.bind(events);
    const host: { app?: ReturnType<typeof w.app> } = {};
    events.append = async (id: string, expected: number, records: StoredRecord[]) => {
      // The tool's blob is in the store; its STEP_COMPLETED is about to be appended: sweep now.
      if (
        id === "a1" &&
        records.some((r) => r.type === STEP_COMPLETED && r.effectId === "fetch") &&
        !sweepDuringAppend
      ) {
        sweepDuringAppend = sweep(host.app!, { ttlMs: 0 });
        await sweepDuringAppend;
      }
      return append(id, expected, records);
    };
    const app = (host.app = w.app({ events }));
    await runAgent(app, "a1", "A", ["fetch"]);
    expect(await sweepDuringAppend).toMatchObject({ scanned: 1, spared: 1, deleted: 0 });
    expect(await w.content.has((await offloaded(app, "a1")).fetch!)).toBe(true);
  });

  it("reports progress on the app bus (`progress`) while it scans and reclaims", async () => {
    const w = world();
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    for (let i = 0; i < 600; i++) await w.content.put(utf8(`orphan ${i}`));
    const tasks = new Map<string, number>();
    app.on("progress", ({ task, done }) => tasks.set(task, Math.max(tasks.get(task) ?? 0, done)));
    const result = await sweep(app, { ttlMs: 0, batches: 1 });
    expect(result.deleted).toBe(600);
    // Every history is walked once, the sweep's own included.
    expect(tasks.get("sweep.scan")).toBe((await w.stores.events.listExecutions()).length);
    expect(tasks.get("sweep.reclaim")).toBe(601);
  });

  it("streams: it never reads a blob's bytes, and reads one history at a time", async () => {
    const w = world();
    await runAgent(w.app(), "a1", "A", ["fetch"]);
    await runAgent(w.app(), "b1", "B", ["fetch", "shared"]);
    const counting = new CountingContentStore(w.content);
    let gets = 0;
    const get = counting.get.bind(counting);
    counting.get = (address, options) => (gets++, get(address, options));
    let reading = 0;
    let maxReading = 0;
    const events = new Proxy(w.stores.events, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== "function") return value;
        if (!["read", "readArchives", "getSnapshot"].includes(String(prop))) return value.bind(target);
        return async (...args: unknown[]) => {
          maxReading = Math.max(maxReading, ++reading);
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } finally {
            reading--;
          }
        };
      },
    }) as EventStore;
    await sweep(w.app({ events, content: counting }), { ttlMs: 0 });
    expect(gets).toBe(0);
    expect(maxReading).toBe(1);
  });

  it("fails closed on a sealed record that does not list its refs: the sweep deletes nothing", async () => {
    const w = world();
    const orphan = await w.content.put(utf8("orphan"));
    await w.stores.events.append("foreign", 0, [
      { seq: 1, at: 1, type: "loom.execution.started", subject: "Z", logicId: "x" },
      { seq: 2, at: 1, type: STEP_COMPLETED, stepId: "s", sealed: "c2VhbGVkIGJ5IHNvbWVvbmUgZWxzZQ==" },
    ]);
    const result = await sweep(w.app(), { ttlMs: 0 });
    expect(result).toMatchObject({ unknownCitations: true, deleted: 0, kept: 1 });
    expect(await w.content.has(orphan)).toBe(true);
  });

  it("refuses a content store without deleteIfUntouchedSince or touchClock (it never deletes unconditionally)", async () => {
    const w = world();
    const content = Object.assign(Object.create(w.content), { deleteIfUntouchedSince: undefined });
    const error = await rejection(sweep(w.app({ content }), { ttlMs: 0 }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toMatch(/deleteIfUntouchedSince or touchClock/);
    expect(await rejection(sweep(w.app(), { ttlMs: -1 }))).toBeInstanceOf(ConfigError);
  });
});

describe("the sweep is a machine run as a journaled execution", () => {
  it("sweep(app) runs the sweep machine as loom.sweep:<n>, one journaled step per batch", async () => {
    const w = world();
    const app = w.app();
    const first = await sweep(app, { ttlMs: 0, batches: 3 });
    const second = await sweep(app, { ttlMs: 0 });
    expect([first.sweepId, second.sweepId]).toEqual(["loom.sweep:1", "loom.sweep:2"]);
    expect(await w.stores.events.getExecution("loom.sweep:1")).toMatchObject({
      logicId: SWEEP_LOGIC_ID,
      status: "done",
    });
    const steps = (await app.log("loom.sweep:1")).filter((r) => r.type === STEP_COMPLETED).map((r) => r.stepId);
    expect(steps).toEqual([
      "loom.sweep#begin",
      "loom.sweep#scan",
      "loom.sweep#reclaim:0",
      "loom.sweep#reclaim:1",
      "loom.sweep#reclaim:2",
    ]);
  });

  it("a concurrent sweep(app) joins the sweep already running in the app", async () => {
    const app = world().app();
    const [first, second] = await Promise.all([sweep(app, { ttlMs: 0 }), sweep(app, { ttlMs: 5 })]);
    expect(second).toBe(first);
    expect((await sweep(app, { ttlMs: 0 })).sweepId).toBe("loom.sweep:2");
  });

  it("a crash after any of its transitions is finished by running it again: the unfinished sweep is resumed", async () => {
    // A clean run counts the sweep's appends.
    const probe = world();
    const counter = new CrashingEvents(probe.stores.events, { prefix: "loom.sweep:" });
    await sweep(probe.app({ events: counter }), { ttlMs: 0 });
    expect(counter.counted).toBeGreaterThan(4);
    for (let at = 1; at <= counter.counted; at++) {
      for (const mode of ["before", "after"] as const) {
        const w = world();
        await runAgent(w.app(), "a1", "A", ["fetch"]);
        const orphans = await Promise.all(Array.from({ length: 8 }, (_, i) => w.content.put(utf8(`orphan ${i}`))));
        const dying = new CrashingEvents(w.stores.events, { prefix: "loom.sweep:", at, mode });
        expect(await rejection(sweep(w.app({ events: dying }), { ttlMs: 0 }))).toBeInstanceOf(SimulatedCrash);
        const again = await sweep(w.app(), { ttlMs: 0 });
        const label = `crash ${mode} append ${at}`;
        // Dying after the last append, the sweep had finished: running it again is a new sweep.
        const finished = mode === "after" && at === counter.counted;
        expect(again.sweepId, label).toBe(finished ? "loom.sweep:2" : "loom.sweep:1");
        for (const orphan of orphans) expect(await w.content.has(orphan), label).toBe(false);
        expect(await w.content.has((await offloaded(w.app(), "a1")).fetch!), label).toBe(true);
        expect((await w.stores.events.getExecution("loom.sweep:1"))?.status, label).toBe("done");
        expect((await sweep(w.app(), { ttlMs: 0 })).sweepId, label).toBe(finished ? "loom.sweep:3" : "loom.sweep:2");
      }
    }
  });

  it("a fresh app that has not loaded loomwork/lifecycle reports a crashed sweep as LifecycleNotLoadedError at boot, and sweep(app) finishes it (ADR 0011)", async () => {
    const w = world();
    await runAgent(w.app(), "a1", "A", ["fetch"]);
    const orphan = await w.content.put(utf8("orphan"));
    const dying = new CrashingEvents(w.stores.events, { prefix: "loom.sweep:", at: 3, mode: "after" });
    expect(await rejection(sweep(w.app({ events: dying }), { ttlMs: 0 }))).toBeInstanceOf(SimulatedCrash);
    expect((await w.stores.events.getExecution("loom.sweep:1"))?.status).toBe("running");
    const fresh = w.app();
    const { resumed, failed } = await fresh.resumeUnfinished();
    expect(resumed).toEqual([]);
    expect(failed.map((f) => f.executionId)).toEqual(["loom.sweep:1"]);
    const error = failed[0]?.error;
    expect(error).toBeInstanceOf(LifecycleNotLoadedError);
    expect(error).toMatchObject({ code: "LOOM_LIFECYCLE_NOT_LOADED", executionId: "loom.sweep:1" });
    expect(String((error as Error).message)).toContain("sweep(app, options) from loomwork/lifecycle");
    // Nothing was written by the refusal: the sweep is still unfinished, and the orphan still there.
    expect((await w.stores.events.getExecution("loom.sweep:1"))?.status).toBe("running");
    expect(await w.content.has(orphan)).toBe(true);
    // The lifecycle function resumes the unfinished sweep and finishes it before anything else.
    expect((await sweep(fresh, { ttlMs: 0 })).sweepId).toBe("loom.sweep:1");
    expect((await w.stores.events.getExecution("loom.sweep:1"))?.status).toBe("done");
    expect(await w.content.has(orphan)).toBe(false);
    // Loaded now: a later boot-style resume of the app sees nothing left to refuse.
    expect((await fresh.resumeUnfinished()).failed).toEqual([]);
  });

  it("sweepUnpinnedContent({ events, content, ttlMs, clock, onProgress }) runs the same journaled sweep over bare stores", async () => {
    const clock = simulatedClock(5_000);
    const w = world({ clock });
    await runAgent(w.app(), "a1", "A", ["fetch"]);
    const orphan = await w.content.put(utf8("orphan"));
    const progress: string[] = [];
    const result = await sweepUnpinnedContent({
      events: w.stores.events,
      content: w.content,
      ttlMs: 0,
      clock,
      onProgress: (e) => progress.push(e.task),
    });
    expect(result).toMatchObject({ sweepId: "loom.sweep:1", deleted: 1, kept: 1, startedAt: 5_000 });
    expect(progress).toContain("sweep.reclaim");
    expect(await w.content.has(orphan)).toBe(false);
  });

  it("over sealed logs: without keys a sealed record's refs pin their blobs (fail closed); with keys its telemetry refs are TTL-judged", async () => {
    const w = world({ crypto: true, snapshotEvery: false });
    await runAgent(w.app(), "t1", "A", ["telemetry"]);
    const { telemetry } = await offloaded(w.app(), "t1");
    const keyless = await sweepUnpinnedContent({ events: w.stores.events, content: w.content, ttlMs: 0 });
    expect(keyless).toMatchObject({ deleted: 0, kept: 1 });
    const keyed = await sweepUnpinnedContent({
      events: w.stores.events,
      content: w.content,
      ttlMs: 0,
      keys: w.stores.keys,
    });
    expect(keyed).toMatchObject({ deleted: 1 });
    expect(await w.content.has(telemetry!)).toBe(false);
  });
});
