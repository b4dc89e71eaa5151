// The journal's records as types: a discriminated union narrowed by `type`, every fold an exhaustive
// map, and EVENT_SCHEMA listing exactly each type's fields.
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  EVENT_RECEIVED,
  EVENT_SCHEMA,
  EXECUTION_ENDED,
  EXECUTION_MIGRATED,
  EXECUTION_STARTED,
  STEP_COMPLETED,
  STEP_FAILED,
  TRANSITION,
  foldRecord,
  isJournalRecord,
  type JournalRecord,
  type RecordHandlers,
  type RecordType,
  type StoredRecord,
} from "../stores/schema.js";
import { foldCatalogue } from "../stores/catalogue.js";
import { compactMacrostep, expandRecords, RecordExpander, transitionValueText } from "../stores/recordFormat.js";
import { stateValueText } from "../actors/journal/planner.js";
import { createActor, createMachine } from "xstate";
import { readdirSync, readFileSync } from "node:fs";

describe("journal records", () => {
  it("narrow by type to their typed fields; other fields read as unknown", () => {
    const record = {
      seq: 2,
      at: 0,
      type: STEP_COMPLETED,
      stepId: "demo#write:1",
      effectId: "write",
      output: 1,
    } as JournalRecord;
    if (record.type === STEP_COMPLETED) {
      expectTypeOf(record.stepId).toEqualTypeOf<string>();
      expectTypeOf(record.output).toEqualTypeOf<unknown>();
    }
    if (record.type === EXECUTION_ENDED) expectTypeOf(record.status).toEqualTypeOf<"done" | "error" | "stopped">();
    if (record.type === TRANSITION) expectTypeOf(record.from).toEqualTypeOf<string | null>();
    expectTypeOf(record.anything).toEqualTypeOf<unknown>();
    // Any record is a StoredRecord (what the stores take); the reverse needs isJournalRecord.
    expectTypeOf<JournalRecord>().toExtend<StoredRecord>();
    expectTypeOf<StoredRecord>().not.toExtend<JournalRecord>();
  });

  it("lists every type in EVENT_SCHEMA, and isJournalRecord knows exactly those", () => {
    expectTypeOf<keyof (typeof EVENT_SCHEMA)["types"]>().toEqualTypeOf<RecordType>();
    for (const type of Object.keys(EVENT_SCHEMA.types)) expect(isJournalRecord({ seq: 1, at: 0, type })).toBe(true);
    expect(isJournalRecord({ seq: 1, at: 0, type: "loom.bogus" })).toBe(false);
    expect(isJournalRecord({ seq: 1, at: 0, type: "toString" })).toBe(false);
  });

  it("folds with one handler per type: a map that misses a type does not compile", () => {
    const one = (n: number) => n + 1;
    const count: RecordHandlers<number, number> = {
      "loom.execution.started": one,
      "loom.event.received": one,
      "loom.step.completed": one,
      "loom.step.failed": one,
      "loom.timer.set": one,
      "loom.messages.delivered": one,
      "loom.transition": one,
      "loom.execution.ended": one,
      "loom.patch.marked": one,
      "loom.execution.migrated": one,
      "loom.erasure.content-delete-intended": one,
      "loom.erasure.content-deleted": one,
    };
    expect(
      foldRecord(count, 0, { seq: 1, at: 0, type: TRANSITION, from: null, to: "idle", event: "xstate.init" }),
    ).toBe(1);
    // @ts-expect-error: the handler of loom.transition (and of every other type) is missing
    const partial: RecordHandlers<number, number> = { [STEP_COMPLETED]: (n: number) => n };
    expect(partial).toBeDefined();
  });

  it("catalogue: a record of an unknown type moves the head only", () => {
    const info = foldCatalogue("x", undefined, [
      {
        seq: 1,
        at: 5,
        type: "loom.execution.started",
        logicId: "demo",
        machineHash: "h",
        subject: "s",
        input: null,
        schema: 1,
      },
      { seq: 2, at: 6, type: "loom.bogus" },
      { seq: 3, at: 7, type: EXECUTION_ENDED, status: "done" },
    ]);
    expect(info).toEqual({
      executionId: "x",
      status: "done",
      startedAt: 5,
      endedAt: 7,
      head: 3,
      subject: "s",
      logicId: "demo",
      machineHash: "h",
    });
  });
});

// Schema 3's stored form (stores/recordFormat.ts): what the journal writes, and what every reader gets back.
describe("the stored form of schema 3", () => {
  const started = {
    seq: 1,
    at: 5,
    type: EXECUTION_STARTED,
    logicId: "agent",
    machineHash: "h",
    input: null,
    schema: 3,
  };
  const init = {
    seq: 2,
    at: 5,
    type: TRANSITION,
    from: null,
    to: "thinking",
    event: "xstate.init",
    inputDigest: "d04b7670",
  };
  const usage = { inputTokens: 100, outputTokens: 20 };
  const model = {
    seq: 3,
    at: 6,
    type: STEP_COMPLETED,
    stepId: "agent#turn:0:model",
    effectId: "model",
    output: { text: "hi", usage: { ...usage, attempts: 1 } },
    usage,
  };
  const toActing = {
    seq: 4,
    at: 6,
    type: TRANSITION,
    from: "thinking",
    to: "acting",
    event: "xstate.done.actor.model",
  };
  const tool = {
    seq: 5,
    at: 7,
    type: STEP_FAILED,
    stepId: "agent#turn:0:tool:0",
    effectId: "search",
    error: { name: "Error", message: "no" },
  };
  const toThinking = {
    seq: 6,
    at: 7,
    type: TRANSITION,
    from: "acting",
    to: "thinking",
    event: "xstate.error.actor.tool:0:0",
  };
  const event = { seq: 7, at: 8, type: EVENT_RECEIVED, event: { type: "NUDGE", why: 1 } };
  const nudged = { seq: 8, at: 8, type: TRANSITION, from: "thinking", to: "thinking", event: "NUDGE" };
  const batches: StoredRecord[][] = [
    [started, init],
    [model, toActing],
    [tool, toThinking],
    [event, nudged],
  ];
  const stored = batches.flatMap((batch) => compactMacrostep(batch));

  it("drops from, a derivable event and a model's usage held twice; keeps an actor where only the child id says it", () => {
    expect(stored).toEqual([
      started,
      { seq: 2, at: 5, type: TRANSITION, to: "thinking", inputDigest: "d04b7670" },
      { seq: 3, at: 6, type: STEP_COMPLETED, stepId: "agent#turn:0:model", effectId: "model", output: model.output },
      { seq: 4, at: 6, type: TRANSITION, to: "acting" },
      tool,
      { seq: 6, at: 7, type: TRANSITION, to: "thinking", actor: "tool:0:0" },
      event,
      { seq: 8, at: 8, type: TRANSITION, to: "thinking" },
    ]);
    // The records given are not changed (the bus hands the same objects to live readers).
    expect(model).toHaveProperty("usage");
    expect(init).toHaveProperty("from", null);
  });

  it("reads back exactly the records written, key order included", () => {
    const read = expandRecords(stored);
    expect(read).toEqual(batches.flat());
    expect(read.map((r) => JSON.stringify(r))).toEqual(batches.flat().map((r) => JSON.stringify(r)));
  });

  it("reads back batch by batch as a follower reads a growing log", () => {
    const expander = new RecordExpander();
    const read = [stored.slice(0, 2), stored.slice(2, 6), stored.slice(6)].flatMap((chunk) => expander.expand(chunk));
    expect(read).toEqual(batches.flat());
  });

  it("keeps an event the input does not derive, and a usage that is not the output's", () => {
    const odd = { ...model, usage: { inputTokens: 1, outputTokens: 2 } };
    const elsewhere = { ...toActing, event: "xstate.done.actor" };
    const [step, transition] = compactMacrostep([odd, elsewhere]);
    expect(step).toHaveProperty("usage", { inputTokens: 1, outputTokens: 2 });
    expect(transition).toEqual({ seq: 4, at: 6, type: TRANSITION, to: "acting", event: "xstate.done.actor" });
    expect(expandRecords([started, ...compactMacrostep([init]), step!, transition!])).toEqual([
      started,
      init,
      odd,
      elsewhere,
    ]);
  });

  it("leaves a batch that is not a macrostep's, and a macrostep without a transition, as it is", () => {
    const stop = {
      seq: 9,
      at: 9,
      type: EXECUTION_ENDED,
      status: "stopped",
      error: { name: "ExecutionStoppedError", message: "x" },
    };
    expect(compactMacrostep([stop])).toEqual([stop]);
    const failed = { seq: 9, at: 9, type: EXECUTION_ENDED, status: "error", error: { name: "Error", message: "x" } };
    expect(compactMacrostep([model, failed])).toEqual([model, failed]);
  });

  it("reads records of schema 1 and 2 unchanged: every golden journal before schema 3", () => {
    const fixtures = new URL("./fixtures/", import.meta.url);
    const old = readdirSync(fixtures)
      .filter((name) => name.endsWith(".journal.json"))
      .map(
        (name) =>
          JSON.parse(readFileSync(new URL(name, fixtures), "utf8")) as { schema: number; records: StoredRecord[] },
      )
      .filter((golden) => golden.schema < 3);
    expect(old.length).toBeGreaterThanOrEqual(3);
    for (const golden of old) expect(expandRecords(golden.records)).toEqual(golden.records);
    // A schema-2 tool step whose output carries a usage of its own gains none: its transition has its `from`.
    const toolWithUsage = {
      seq: 3,
      at: 6,
      type: STEP_COMPLETED,
      stepId: "a#x:1",
      effectId: "x",
      output: { usage: { inputTokens: 1, outputTokens: 1 } },
    };
    const v2Transition = { seq: 4, at: 6, type: TRANSITION, from: "a", to: "b", event: "xstate.done.actor.x" };
    expect(expandRecords([toolWithUsage, v2Transition])).toEqual([toolWithUsage, v2Transition]);
  });

  it("leaves absent what the records before a read derive (a replay from a snapshot), and sealed records as they are", () => {
    expect(expandRecords(stored.slice(2))[1]).toEqual({
      seq: 4,
      at: 6,
      type: TRANSITION,
      to: "acting",
      event: "xstate.done.actor.model",
    });
    expect(expandRecords(stored.slice(3))[0]).toEqual({ seq: 4, at: 6, type: TRANSITION, to: "acting" });
    const sealed = { seq: 4, at: 6, type: TRANSITION, to: "acting", sealed: "AAAA" };
    expect(expandRecords([...stored.slice(0, 3), sealed])[3]).toBe(sealed);
  });

  it("takes `from` after a migration from the state it continues from", () => {
    const migrated = {
      seq: 9,
      at: 9,
      type: EXECUTION_MIGRATED,
      machineHash: "h2",
      state: { machine: { value: { review: { left: "a", right: "b" } } } },
    };
    const next = compactMacrostep([
      { ...event, seq: 10 },
      { ...nudged, seq: 11, from: "review.left.a,review.right.b" },
    ]);
    expect(expandRecords([...stored, migrated, ...next]).at(-1)).toMatchObject({
      from: "review.left.a,review.right.b",
      to: "thinking",
      event: "NUDGE",
    });
  });

  it("spells state values as the planner does, parallel and nested ones too", () => {
    const machine = createMachine({
      id: "p",
      type: "parallel",
      states: {
        a: { initial: "x", states: { x: { initial: "deep", states: { deep: {} } } } },
        b: { initial: "y", states: { y: {} } },
        c: {},
      },
    });
    const snapshot = createActor(machine).getSnapshot();
    expect(transitionValueText(snapshot.value)).toBe(stateValueText(snapshot));
    expect(transitionValueText(snapshot.value)).toBe("a.x.deep,b.y,c");
    expect(transitionValueText("idle")).toBe("idle");
  });
});
