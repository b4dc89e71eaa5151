// security.crypto: one test per sentence of the per-subject sealing decision (issue 6, ADR 0140 D8).
import { describe, expect, it } from "vitest";
import { createJournalCodec, ExecutionErasedError, isSealedState } from "../../actors/journal/sealing.js";
import { sweepUnpinnedContent } from "../../actors/lifecycle/standalone.js";
import { SubjectErasedError } from "../../stores/errors.js";
import { MemoryEventStore } from "../../stores/memory.js";
import { isSealed, RecordAuthenticationError } from "../../stores/recordSealing.js";
import { EXECUTION_ENDED, EXECUTION_STARTED, STEP_COMPLETED } from "../../stores/schema.js";
import type { EventStore, StoredRecord } from "../../stores/types.js";
import * as loomwork from "../../index.js";
import { canaryOf, CrashingEvents, offloaded, rejection, runAgent, world } from "./support.js";
import { exportSubject } from "../../lifecycle.js";

async function sealedWorld() {
  const w = world({ crypto: true });
  const app = w.app();
  await runAgent(app, "a1", "A", ["fetch", "public2"]);
  await runAgent(app, "b1", "B", ["fetch"]);
  return { w, app };
}

/** A copy of an execution's raw records in a fresh store, with `edit` applied: a store someone tampered with. */
async function tampered(events: EventStore, executionId: string, edit: (records: StoredRecord[]) => StoredRecord[]) {
  const copy = new MemoryEventStore();
  await copy.append(executionId, 0, edit(structuredClone(await events.read(executionId))));
  return copy;
}

describe("security.crypto: per-subject record sealing", () => {
  it("seals each record's payload of a subject's executions under that subject's key", async () => {
    const { w, app } = await sealedWorld();
    const raw = await w.stores.events.read("a1");
    expect(raw.length).toBeGreaterThan(4);
    expect(raw.every(isSealed)).toBe(true);
    const text = JSON.stringify(raw);
    expect(text).not.toContain(canaryOf("A"));
    expect(text).not.toContain("work for A");
    // The app holds the key: it reads the records as they were journaled.
    const log = await app.log("a1");
    expect(log.some(isSealed)).toBe(false);
    expect(log[0]).toMatchObject({ type: EXECUTION_STARTED, subject: "A", input: { prompt: "work for A" } });
    expect(await app.result("a1")).toMatchObject({ text: "done" });
  });

  it("the AAD binds the execution id and the seq: a record moved to another seq or execution fails authentication", async () => {
    const { w } = await sealedWorld();
    await runAgent(w.app(), "a2", "A", ["public2"]);
    const codec = createJournalCodec(w.stores.keys, w.stores.events);
    const raw = await w.stores.events.read("a1");
    const moved = { ...raw[2]!, seq: raw[3]!.seq };
    expect(await rejection(codec.open("a1", [moved]))).toBeInstanceOf(RecordAuthenticationError);
    // Same subject, same key, another execution: still refused.
    expect(await rejection(codec.open("a2", [raw[2]!]))).toBeInstanceOf(RecordAuthenticationError);
    // Another subject's execution: another key.
    expect(await rejection(codec.open("b1", [raw[2]!]))).toBeInstanceOf(RecordAuthenticationError);
    expect(await codec.open("a1", [raw[2]!])).toHaveLength(1);
  });

  it("the package's createJournalCodec (its code loaded on first use) opens, seals and refuses as SubjectCodec does, with the same error classes", async () => {
    const { w } = await sealedWorld();
    const codec = loomwork.createJournalCodec(w.stores.keys, w.stores.events);
    codec.forget("a1"); // before it loaded: nothing cached, no throw
    const raw = await w.stores.events.read("a1");
    expect(await codec.open("a1", [raw[2]!])).toEqual(
      await createJournalCodec(w.stores.keys, w.stores.events).open("a1", [raw[2]!]),
    );
    expect(await rejection(codec.open("a1", [{ ...raw[2]!, seq: raw[3]!.seq }]))).toBeInstanceOf(
      loomwork.RecordAuthenticationError,
    );
    expect(loomwork.RecordAuthenticationError).toBe(RecordAuthenticationError);
    expect(loomwork.ExecutionErasedError).toBe(ExecutionErasedError);
    const sealed = await codec.seal("s1", "A", [
      { seq: 1, at: 0, type: STEP_COMPLETED, stepId: "x", effectId: "e", output: canaryOf("A") },
    ]);
    expect(isSealed(sealed[0]!)).toBe(true);
    expect(await codec.open("s1", sealed)).toMatchObject([{ output: canaryOf("A") }]);
  });

  it("ids, types, seqs and the cited content addresses (refs, listed before sealing) stay readable: the walker needs no key", async () => {
    const { w, app } = await sealedWorld();
    const { fetch } = await offloaded(app, "a1");
    const raw = await w.stores.events.read("a1");
    const step = raw.find((r) => r.type === STEP_COMPLETED && r.effectId === "fetch")!;
    expect(step).toMatchObject({
      seq: expect.any(Number),
      at: expect.any(Number),
      stepId: expect.stringMatching(/#turn:0:tool:\d$/),
      refs: [fetch],
    });
    expect(
      raw
        .filter((r) => r.type !== STEP_COMPLETED || r.effectId !== "fetch")
        .every((r) => !(r.refs as string[]).includes(fetch!)),
    ).toBe(true);
    // The catalogue folds subject, logic and status from the readable copies.
    expect(await w.stores.events.getExecution("a1")).toMatchObject({
      subject: "A",
      logicId: expect.stringMatching(/^agent-/),
      status: "done",
    });
    // A keyless sweep sees the refs, and fails closed on them (pins them).
    const swept = await sweepUnpinnedContent({ events: w.stores.events, content: w.content, ttlMs: 0 });
    expect(swept).toMatchObject({ deleted: 0, unknownCitations: false });
    expect(await w.content.has(fetch!)).toBe(true);
  });

  it("a readable catalogue copy that differs from the sealed payload fails authentication", async () => {
    const { w } = await sealedWorld();
    const copy = await tampered(w.stores.events, "a1", (records) => {
      records[0]!.logicId = "someone-else";
      return records;
    });
    const codec = createJournalCodec(w.stores.keys, copy);
    expect(await rejection(codec.open("a1", await copy.read("a1")))).toBeInstanceOf(RecordAuthenticationError);
    const ended = (await w.stores.events.read("a1")).find((r) => r.type === EXECUTION_ENDED)!;
    expect(ended.status).toBe("done");
  });

  it("snapshots' state is sealed too, bound to its seq, with its refs readable", async () => {
    const { w, app } = await sealedWorld();
    const { fetch } = await offloaded(app, "a1");
    const snapshot = (await w.stores.events.getSnapshot("a1"))!;
    expect(isSealedState(snapshot.state)).toBe(true);
    expect((snapshot.state as { refs: string[] }).refs).toContain(fetch);
    expect(JSON.stringify(snapshot)).not.toContain(canaryOf("A"));
    const codec = createJournalCodec(w.stores.keys, w.stores.events);
    expect(await codec.openState("a1", snapshot.state, snapshot.seq)).toMatchObject({
      machine: { value: expect.anything() },
      pending: expect.any(Object),
    });
    expect(await rejection(codec.openState("a1", snapshot.state, snapshot.seq + 1))).toBeInstanceOf(
      RecordAuthenticationError,
    );
    // A fresh app resumes from the sealed snapshot.
    const actor = await w.app().resume("a1");
    expect(actor.replay.fromSnapshotSeq).toBe(snapshot.seq);
    expect(actor.getSnapshot().status).toBe("done");
  });

  it("executions without a subject are not sealed", async () => {
    const w = world({ crypto: true });
    await runAgent(w.app(), "n1", undefined, ["note"]);
    const raw = await w.stores.events.read("n1");
    expect(raw.some(isSealed)).toBe(false);
    expect(raw[0]).toMatchObject({ input: { prompt: "work for nobody" } });
  });

  it("sealing happens before the store's append is called (no WebCrypto inside a storage transaction)", async () => {
    const w = world({ crypto: true });
    const seen: StoredRecord[] = [];
    const events = new CrashingEvents(w.stores.events, { prefix: "a1" });
    const append = events.append.bind(events);
    events.append = async (id, expected, records) => {
      if (id === "a1") seen.push(...records);
      return append(id, expected, records);
    };
    await runAgent(w.app({ events }), "a1", "A", ["fetch"]);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every(isSealed)).toBe(true);
  });

  it("destroying the key is the shred: the subject's records then fail to open with a typed error, not garbage", async () => {
    const { w } = await sealedWorld();
    await w.stores.keys.destroy("A");
    const fresh = w.app();
    for (const attempt of [
      () => fresh.log("a1"),
      () => fresh.resume("a1"),
      () => fresh.result("a1"),
      () => exportSubject(fresh, "A"),
    ]) {
      const error = await rejection(attempt());
      expect(error).toBeInstanceOf(SubjectErasedError);
    }
    const error = (await rejection(fresh.log("a1"))) as ExecutionErasedError;
    expect(error).toBeInstanceOf(ExecutionErasedError);
    expect(error).toMatchObject({ code: "LOOM_SUBJECT_ERASED", subject: "A", executionId: "a1" });
    expect(error.message).toMatch(/crypto-shredded/);
    // No new data can be sealed for the subject; another subject is untouched.
    expect(await rejection(runAgent(fresh, "a3", "A", ["public2"]))).toBeInstanceOf(SubjectErasedError);
    expect((await fresh.log("b1")).some(isSealed)).toBe(false);
  });
});
