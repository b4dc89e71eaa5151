// One conformance suite for every adapter: each adapter's test file calls describeStoresConformance
// with a factory. What it asserts is the SPI contract written in stores/types.ts.
import { describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp } from "../../actors/app.js";
import { simulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect, type Effect } from "../../actors/effects/effect.js";
import { ConcurrencyError, SubjectErasedError } from "../../stores/errors.js";
import { memoryStores } from "../../stores/memory.js";
import { EXECUTION_ENDED, EXECUTION_STARTED, STEP_COMPLETED } from "../../stores/schema.js";
import type { EventStore, StoredRecord, Stores } from "../../stores/types.js";
import { utf8 } from "../../stores/bytes.js";
import { workloadEffects } from "../support/workload.js";
import { expandRecords } from "../../stores/recordFormat.js";

export interface AdapterHarness {
  /** Fresh, empty stores. */
  open(): Promise<Stores>;
  /** The same storage opened anew (a fresh process or tab); optional for memory. */
  reopen?(previous: Stores): Promise<Stores>;
  /** Closes and removes what open() created. */
  cleanup?(stores: Stores): Promise<void>;
}

export const started = (seq: number, subject?: string): StoredRecord => ({
  seq,
  at: 1_000 + seq,
  type: EXECUTION_STARTED,
  logicId: "demo",
  machineHash: "h",
  input: { n: 1 },
  schema: 1,
  ...(subject ? { subject } : {}),
});
export const step = (seq: number, output: unknown = { ok: seq }): StoredRecord => ({
  seq,
  at: 1_000 + seq,
  type: STEP_COMPLETED,
  stepId: `demo#s:${seq}`,
  effectId: "tool",
  output,
});

// The agent the "full agent run" test drives: the seeded workload (spec/support/workload.ts), with a
// snapshot every 8 records so the resume starts from a stored snapshot and replays only the tail.
const AGENT_TURNS = 8;
const KILL_TURN = 5;
const agentLoop = agentLoop$({
  id: "conformance",
  model: "model",
  tools: ["search"],
  maxTurns: AGENT_TURNS,
  warnTranscriptBytes: false,
});
const agentConfig = (stores: Stores, effects: Record<string, Effect>) =>
  defineConfig({ stores, effects, logics: [agentLoop], clock: simulatedClock(1_000), execution: { snapshotEvery: 8 } });

/** Effects of the workload that also log which step ids they ran live. */
function loggedWorkload() {
  const { effects, counters } = workloadEffects(AGENT_TURNS);
  const ran: string[] = [];
  const logged = (effect: Effect): Effect => ({
    ...effect,
    run: (input, ctx) => (ran.push(ctx.stepId), effect.run(input, ctx)),
  });
  return { effects: { model: logged(effects.model!), search: logged(effects.search!) }, counters, ran };
}

/** The uninterrupted run: its output and journal are what a killed-and-resumed run must reproduce. */
async function uninterruptedAgentRun(): Promise<{ output: unknown; log: StoredRecord[] }> {
  const app = createApp(agentConfig(memoryStores(), workloadEffects(AGENT_TURNS).effects));
  await app.start(agentLoop, { executionId: "agent", input: { prompt: "research barn owls" } });
  const output = await app.result("agent");
  const log = await app.log("agent");
  await app.close();
  return { output, log };
}

/**
 * The event store as a dying process holds it: its snapshot writes (fire-and-forget in the runtime)
 * can be drained before the "process" goes away, so a reopen never races a half-issued write.
 */
function drainableEvents(events: EventStore): { events: EventStore; drain(): Promise<void> } {
  const writes = new Set<Promise<unknown>>();
  const proxy = new Proxy(events, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property !== "putSnapshot") return value.bind(target);
      return (...args: unknown[]) => {
        const write = (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        writes.add(write);
        void write.finally(() => writes.delete(write)).catch(() => undefined);
        return write;
      };
    },
  });
  return { events: proxy, drain: async () => void (await Promise.allSettled([...writes])) };
}

export function describeStoresConformance(name: string, harness: AdapterHarness): void {
  describe(`${name} conforms to the storage SPIs`, () => {
    const withStores = (fn: (stores: Stores) => Promise<void>) => async () => {
      const stores = await harness.open();
      try {
        await fn(stores);
      } finally {
        await harness.cleanup?.(stores);
      }
    };

    it(
      "appends and reads records back exactly, with a head and a catalogue",
      withStores(async ({ events }) => {
        expect(await events.head("e1")).toBe(0);
        expect(await events.getExecution("e1")).toBeUndefined();
        const records = [started(1, "user-1"), step(2, { text: "héllo ✓", nested: [1, { a: null }] })];
        await events.append("e1", 0, records);
        await events.append("e1", 2, [step(3)]);
        expect(await events.read("e1")).toEqual([...records, step(3)]);
        expect(await events.read("e1", 3)).toEqual([step(3)]);
        expect(await events.head("e1")).toBe(3);
        const info = await events.getExecution("e1");
        expect(info).toMatchObject({
          executionId: "e1",
          subject: "user-1",
          logicId: "demo",
          status: "running",
          head: 3,
          startedAt: 1001,
        });
        await events.append("e1", 3, [{ seq: 4, at: 2_000, type: EXECUTION_ENDED, status: "done", output: 1 }]);
        expect(await events.getExecution("e1")).toMatchObject({ status: "done", endedAt: 2_000, head: 4 });
      }),
    );

    it(
      "refuses a stale expected seq with ConcurrencyError and leaves the log intact",
      withStores(async ({ events }) => {
        await events.append("e1", 0, [started(1)]);
        const results = await Promise.allSettled([
          events.append("e1", 1, [step(2, "a")]),
          events.append("e1", 1, [step(2, "b")]),
        ]);
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        const rejected = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
        expect(rejected.reason).toBeInstanceOf(ConcurrencyError);
        expect(rejected.reason).toMatchObject({ executionId: "e1", expected: 1, actual: 2 });
        const log = await events.read("e1");
        expect(log.map((r) => r.seq)).toEqual([1, 2]);
        await expect(events.append("e1", 5, [step(6)])).rejects.toBeInstanceOf(ConcurrencyError);
        await expect(events.append("e1", 2, [step(4)])).rejects.toBeInstanceOf(RangeError);
        expect(await events.head("e1")).toBe(2);
      }),
    );

    it(
      "keeps the newest snapshot only",
      withStores(async ({ events }) => {
        await events.append("e1", 0, [started(1), step(2), step(3)]);
        await events.putSnapshot("e1", { seq: 3, at: 5, state: { value: "b", context: { n: [1, 2] } } });
        await events.putSnapshot("e1", { seq: 2, at: 4, state: { value: "a" } });
        expect(await events.getSnapshot("e1")).toEqual({
          seq: 3,
          at: 5,
          state: { value: "b", context: { n: [1, 2] } },
        });
        expect(await events.getSnapshot("nope")).toBeUndefined();
      }),
    );

    it(
      "hands out copies: mutating a snapshot or records given or read leaves the store unchanged",
      withStores(async ({ events }) => {
        const records = [started(1), step(2, { list: [1, 2] })];
        await events.append("e1", 0, records);
        records[1]!.output = "changed";
        const given = { seq: 2, at: 5, state: { value: "b", context: { n: [1, 2] } } };
        await events.putSnapshot("e1", given);
        given.state.context.n.push(99);
        const read = await events.getSnapshot("e1");
        expect(read).toEqual({ seq: 2, at: 5, state: { value: "b", context: { n: [1, 2] } } });
        (read!.state as { context: { n: number[] } }).context.n.push(7);
        read!.seq = 1;
        expect(await events.getSnapshot("e1")).toEqual({
          seq: 2,
          at: 5,
          state: { value: "b", context: { n: [1, 2] } },
        });
        const log = await events.read("e1");
        log[1]!.output = "changed";
        log.pop();
        expect(await events.read("e1")).toEqual([started(1), step(2, { list: [1, 2] })]);
      }),
    );

    it(
      "archives old records into segments and keeps the live tail",
      withStores(async ({ events }) => {
        await events.append("e1", 0, [started(1), step(2), step(3), step(4)]);
        await events.archive("e1", 2);
        expect((await events.read("e1")).map((r) => r.seq)).toEqual([3, 4]);
        await events.archive("e1", 3);
        const segments = await events.readArchives("e1");
        expect(segments.map((s) => [s.fromSeq, s.toSeq])).toEqual([
          [1, 2],
          [3, 3],
        ]);
        expect(segments[0]!.records).toEqual([started(1), step(2)]);
        await expect(events.archive("e1", 3)).rejects.toBeInstanceOf(RangeError);
        await expect(events.archive("e1", 9)).rejects.toBeInstanceOf(RangeError);
        expect(await events.head("e1")).toBe(4);
        await events.append("e1", 4, [step(5)]);
        expect((await events.read("e1")).map((r) => r.seq)).toEqual([4, 5]);
      }),
    );

    it(
      "lists executions in id order and deletes whole histories",
      withStores(async ({ events }) => {
        await events.append("b", 0, [started(1, "s2")]);
        await events.append("a", 0, [started(1, "s1"), step(2)]);
        await events.putSnapshot("a", { seq: 2, at: 1, state: {} });
        await events.archive("a", 1);
        expect((await events.listExecutions()).map((e) => [e.executionId, e.subject, e.head])).toEqual([
          ["a", "s1", 2],
          ["b", "s2", 1],
        ]);
        await events.deleteHistory("a");
        expect((await events.listExecutions()).map((e) => e.executionId)).toEqual(["b"]);
        expect(await events.read("a")).toEqual([]);
        expect(await events.readArchives("a")).toEqual([]);
        expect(await events.getSnapshot("a")).toBeUndefined();
        expect(await events.head("a")).toBe(0);
        await events.append("a", 0, [started(1)]);
        expect(await events.head("a")).toBe(1);
      }),
    );

    it(
      "refuses execution ids and subjects that are not well-formed UTF-16 (a lone surrogate), reading or writing, and keeps U+FFFD apart",
      withStores(async ({ events, keys }) => {
        const refused = { name: "MalformedIdError", code: "LOOM_MALFORMED_ID" };
        await events.append("a\ufffd", 0, [started(1, "s\ufffd")]);
        await keys.getOrCreate("s\ufffd");
        // PostgreSQL's text would store each of these as "a\ufffd": one execution for two ids.
        for (const id of ["a\ud800", "a\udfff", "\ud83d", "a\udc00\ud800"]) {
          const calls: [string, () => Promise<unknown>][] = [
            ["append", () => events.append(id, 0, [started(1)])],
            ["append (at the head)", () => events.append(id, 1, [step(2)])],
            ["read", () => events.read(id)],
            ["head", () => events.head(id)],
            ["getExecution", () => events.getExecution(id)],
            ["putSnapshot", () => events.putSnapshot(id, { seq: 1, at: 1, state: {} })],
            ["getSnapshot", () => events.getSnapshot(id)],
            ["archive", () => events.archive(id, 1)],
            ["readArchives", () => events.readArchives(id)],
            ["deleteHistory", () => events.deleteHistory(id)],
            ["keys.getOrCreate", () => keys.getOrCreate(id)],
            ["keys.get", () => keys.get(id)],
            ["keys.destroy", () => keys.destroy(id)],
            ["keys.isDestroyed", () => keys.isDestroyed(id)],
            [
              "append of a start whose subject has one",
              () => events.append(`subject of ${id.length}`, 0, [started(1, id)]),
            ],
          ];
          for (const [what, call] of calls)
            await expect(call(), `${what} of ${JSON.stringify(id)}`).rejects.toMatchObject(refused);
        }
        // Nothing was written for them, and U+FFFD's execution and key are untouched.
        expect((await events.listExecutions()).map((e) => [e.executionId, e.subject, e.head])).toEqual([
          ["a\ufffd", "s\ufffd", 1],
        ]);
        expect(await events.read("a\ufffd")).toEqual([started(1, "s\ufffd")]);
        expect(await keys.isDestroyed("s\ufffd")).toBe(false);
        // A surrogate pair is well-formed: its own execution, apart from U+FFFD's.
        await events.append("a🧵", 0, [started(1, "s🧵")]);
        const listed = (await events.listExecutions()).map((e) => [e.executionId, e.subject]);
        expect(listed.sort(([a], [b]) => (a! < b! ? -1 : 1))).toEqual([
          ["a🧵", "s🧵"],
          ["a\ufffd", "s\ufffd"],
        ]);
      }),
    );

    it(
      "stores blobs by content address, idempotently",
      withStores(async ({ content }) => {
        const a1 = await content.put(utf8("hello"));
        const a2 = await content.put(utf8("hello"));
        expect(a1).toBe(a2);
        expect(a1).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(await content.has(a1)).toBe(true);
        expect(new TextDecoder().decode(await content.get(a1))).toBe("hello");
        expect(await content.get("sha256:" + "0".repeat(64))).toBeUndefined();
        const listed = [];
        for await (const info of content.list()) listed.push(info);
        expect(listed.map((i) => [i.address, i.size])).toEqual([[a1, 5]]);
        if (content.delete) {
          expect(await content.delete(a1)).toBe(true);
          expect(await content.has(a1)).toBe(false);
          expect(await content.delete(a1)).toBe(false);
        }
      }),
    );

    it(
      "deletes conditionally: a put after the touch clock spares the blob",
      withStores(async ({ content }) => {
        if (!content.deleteIfUntouchedSince || !content.touchClock)
          return expect(content.spiVersion < "1.3.0").toBe(true);
        const old = await content.put(utf8("old"));
        const touched = await content.put(utf8("touched"));
        const cutoff = await content.touchClock();
        await content.put(utf8("touched"));
        expect(await content.deleteIfUntouchedSince(old, cutoff)).toBe(true);
        expect(await content.deleteIfUntouchedSince(touched, cutoff)).toBe(false);
        expect(await content.has(old)).toBe(false);
        expect(await content.has(touched)).toBe(true);
        const later = await content.touchClock();
        expect(later).toBeGreaterThan(cutoff);
        expect(await content.deleteIfUntouchedSince(touched, later)).toBe(true);
      }),
    );

    it(
      "keeps per-subject keys and shreds them for good",
      withStores(async ({ keys }) => {
        const k1 = await keys.getOrCreate("alice");
        expect(k1).toHaveLength(32);
        expect(await keys.getOrCreate("alice")).toEqual(k1);
        expect(await keys.get("bob")).toBeUndefined();
        const k2 = await keys.getOrCreate("bob");
        expect(k2).not.toEqual(k1);
        await keys.destroy("alice");
        await keys.destroy("alice");
        expect(await keys.get("alice")).toBeUndefined();
        expect(await keys.isDestroyed("alice")).toBe(true);
        expect(await keys.isDestroyed("bob")).toBe(false);
        await expect(keys.getOrCreate("alice")).rejects.toBeInstanceOf(SubjectErasedError);
        expect(await keys.get("bob")).toEqual(k2);
      }),
    );

    it("a full agent run and its resume: killed mid-run, resumed in a fresh app with no recorded call re-run", async () => {
      const reference = await uninterruptedAgentRun();
      let stores = await harness.open();
      try {
        // The first app: its tool call at turn KILL_TURN never returns, then the process "dies".
        const first = loggedWorkload();
        let died!: () => void;
        const death = new Promise<void>((resolve) => (died = resolve));
        const killStep = `conformance#turn:${KILL_TURN}:tool:0`;
        const search = first.effects.search;
        const dying = {
          ...first.effects,
          search: createToolEffect(async (input: unknown, ctx) => {
            if (ctx.stepId !== killStep) return search.run(input, ctx);
            died();
            return new Promise<never>(() => {});
          }),
        };
        const { events, drain } = drainableEvents(stores.events);
        const app1 = createApp(agentConfig({ ...stores, events }, dying));
        await app1.start(agentLoop, { executionId: "agent", input: { prompt: "research barn owls" } });
        await death;
        await app1.close();
        await drain();
        const recorded = (await stores.events.read("agent"))
          .filter((r) => r.type === STEP_COMPLETED)
          .map((r) => r.stepId as string);
        expect(recorded).toHaveLength(2 * KILL_TURN + 1); // turns 0..KILL_TURN-1 (model + tool), and KILL_TURN's model
        expect(recorded).not.toContain(killStep);
        expect(await stores.events.getExecution("agent")).toMatchObject({ status: "running", logicId: "conformance" });

        // A fresh app over the storage opened anew (a new process or tab), knowing the loop by id.
        if (harness.reopen) stores = await harness.reopen(stores);
        const second = loggedWorkload();
        const app2 = createApp(agentConfig(stores, second.effects));
        const actor = await app2.resume("agent");
        expect(actor.replay.fromSnapshotSeq).toBeGreaterThan(0);
        expect(actor.replay.stepsToRun).toBe(1);
        expect(await app2.result("agent")).toEqual(reference.output);
        await app2.close();

        // Zero model or tool calls for recorded turns: the fresh app ran exactly the steps without an outcome.
        expect(second.ran.filter((id) => recorded.includes(id))).toEqual([]);
        expect(second.ran[0]).toBe(killStep);
        expect(second.counters).toEqual({
          modelCalls: AGENT_TURNS - KILL_TURN - 1,
          toolCalls: AGENT_TURNS - KILL_TURN - 1,
        });
        const log = expandRecords(await stores.events.read("agent"));
        expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
        expect(log).toEqual(reference.log);
        expect(await stores.events.getExecution("agent")).toMatchObject({ status: "done", head: log.length });
      } finally {
        await harness.cleanup?.(stores);
      }
    });

    if (harness.reopen) {
      it("survives a reopen: records, catalogue, snapshots, archives, blobs and keys", async () => {
        const first = await harness.open();
        await first.events.append("e1", 0, [started(1, "s"), step(2), step(3)]);
        await first.events.putSnapshot("e1", { seq: 3, at: 9, state: { x: 1 } });
        await first.events.archive("e1", 1);
        const address = await first.content.put(utf8("blob"));
        const key = await first.keys.getOrCreate("s");
        await first.keys.getOrCreate("gone");
        await first.keys.destroy("gone");
        const second = await harness.reopen!(first);
        try {
          expect(await second.events.read("e1")).toEqual([step(2), step(3)]);
          expect(await second.events.head("e1")).toBe(3);
          expect(await second.events.getExecution("e1")).toMatchObject({ subject: "s", head: 3 });
          expect(await second.events.getSnapshot("e1")).toEqual({ seq: 3, at: 9, state: { x: 1 } });
          expect((await second.events.readArchives("e1"))[0]!.records).toEqual([started(1, "s")]);
          expect(new TextDecoder().decode(await second.content.get(address))).toBe("blob");
          expect(await second.keys.get("s")).toEqual(key);
          expect(await second.keys.isDestroyed("gone")).toBe(true);
          await second.events.append("e1", 3, [step(4)]);
          expect(await second.events.head("e1")).toBe(4);
        } finally {
          await harness.cleanup?.(second);
        }
      });
    }
  });
}
