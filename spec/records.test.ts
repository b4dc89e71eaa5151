// The journal's records as types: a discriminated union narrowed by `type`, every fold an exhaustive
// map, and EVENT_SCHEMA listing exactly each type's fields.
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  EVENT_SCHEMA,
  EXECUTION_ENDED,
  STEP_COMPLETED,
  TRANSITION,
  foldRecord,
  isJournalRecord,
  type JournalRecord,
  type RecordHandlers,
  type RecordType,
  type StoredRecord,
} from "../stores/schema.js";
import { foldCatalogue } from "../stores/catalogue.js";

describe("journal records", () => {
  it("narrow by type to their typed fields; other fields read as unknown", () => {
    const record = { seq: 2, at: 0, type: STEP_COMPLETED, stepId: "demo#write:1", effectId: "write", output: 1 } as JournalRecord;
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
      "loom.transition": one,
      "loom.execution.ended": one,
      "loom.patch.marked": one,
      "loom.execution.migrated": one,
      "loom.erasure.content-delete-intended": one,
      "loom.erasure.content-deleted": one,
    };
    expect(foldRecord(count, 0, { seq: 1, at: 0, type: TRANSITION, from: null, to: "idle", event: "xstate.init" })).toBe(1);
    // @ts-expect-error: the handler of loom.transition (and of every other type) is missing
    const partial: RecordHandlers<number, number> = { [STEP_COMPLETED]: (n: number) => n };
    expect(partial).toBeDefined();
  });

  it("catalogue: a record of an unknown type moves the head only", () => {
    const info = foldCatalogue("x", undefined, [
      { seq: 1, at: 5, type: "loom.execution.started", logicId: "demo", machineHash: "h", subject: "s", input: null, schema: 1 },
      { seq: 2, at: 6, type: "loom.bogus" },
      { seq: 3, at: 7, type: EXECUTION_ENDED, status: "done" },
    ]);
    expect(info).toEqual({ executionId: "x", status: "done", startedAt: 5, endedAt: 7, head: 3, subject: "s", logicId: "demo", machineHash: "h" });
  });
});
