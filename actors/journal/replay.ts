// The one replay fold: journal records onto a runtime state, through the pure planner. Recovery
// (Execution.recover), the archive's snapshot at the head (actors/lifecycle/retention.ts) and so app.stats use it,
// so they agree on every record: a control record is skipped, a stopped EXECUTION_ENDED (app.stop
// journals it on its own, between macrosteps) ends the state as stopped, and a macrostep's records are
// checked against what the planner derives from its input.
//
// It is one handler per record type (`RecordHandlers`, the shape of Temporal's Activator):
// a new record type does not compile until this fold says what it does at the start of a macrostep.
import {
  foldRecord,
  isJournalRecord,
  type MacrostepInput,
  type RecordHandlers,
  type StoredRecord,
} from "../../stores/schema.js";
import * as schema from "../../stores/schema.js";
import { isObject } from "../../stores/shapes.js";
import { isControlRecord } from "../constants.js";
import { NonDeterminismError } from "../errors.js";
import { loggedMarkers } from "./patches.js";
import {
  adoptLegacyTimerId,
  contextDigestOf,
  plannedFacts,
  planMacrostep,
  restoreState,
  type Macrostep,
  type PlanContext,
  type RuntimeState,
} from "./planner.js";

/** Where a fold stands: the state so far (none before EXECUTION_STARTED) and the seq it has folded through. */
export interface FoldPosition {
  state: RuntimeState | undefined;
  seq: number;
}

// What a handler sees: the position, the records, and where the record it handles stands in them.
interface Cursor {
  ctx: PlanContext;
  position: FoldPosition;
  /** As stored: a record of a type the schema does not know is refused where a macrostep should start. */
  records: readonly StoredRecord[];
  index: number;
  onMacrostep: ((step: Macrostep) => void) | undefined;
  /** The state before the last macrostep folded (none before the start's): an action's error end goes back to it. */
  before?: RuntimeState | undefined;
}

/** A handler's verdict: how many records it consumed (the record it was given, and what followed it). */
type Consumed = number;

// A record the planner writes itself (TIMER_SET, TRANSITION), or of a type the schema does not know, met where a
// macrostep should start: a record was removed or altered.
function outOfPlace(cursor: Cursor, record: StoredRecord): never {
  throw new NonDeterminismError(
    cursor.ctx.executionId,
    record.seq,
    "a record of type",
    record.type,
    "the start of a macrostep",
  );
}

// An input record: plans its macrostep and checks the journaled records after it against the plan.
function replayMacrostep(cursor: Cursor, input: MacrostepInput): Consumed {
  const { ctx, position, records, index } = cursor;
  if (input.seq !== position.seq + 1)
    throw new NonDeterminismError(ctx.executionId, input.seq, "seq", input.seq, position.seq + 1);
  // The patch markers the journaled macrostep holds decide its patches (actors/journal/patches.ts), so it replays them as logged.
  const step = planMacrostep(ctx, position.state, input, loggedMarkers(records, index));
  for (let k = 1; k < step.records.length; k++) {
    const logged = records[index + k];
    const planned = step.records[k]!;
    if (logged) adoptLegacyTimerId(step, planned, logged);
    const expected = logged ? plannedFacts(logged) : "no record";
    // The due time is the clock's (journaled, not derived); the start input's digest is checked only where the log has one;
    // so is a transition's `from`, absent where the stored form's reader starts after what derives it (stores/recordFormat.ts).
    const actual = plannedFacts({
      ...planned,
      dueAt: "dueAt" in planned ? (logged ? logged.dueAt : planned.dueAt) : undefined,
      inputDigest:
        logged?.inputDigest === undefined ? undefined : "inputDigest" in planned ? planned.inputDigest : undefined,
      // A logged context digest is checked by every replay, whatever the replaying app's checkDeterminism says.
      contextDigest:
        logged?.contextDigest === undefined || planned.type !== schema.TRANSITION
          ? undefined
          : contextDigestOf(step.state.snapshot),
      ...(logged?.type === schema.TRANSITION && logged.from === undefined ? { from: undefined } : {}),
    });
    if (JSON.stringify(expected) !== JSON.stringify(actual))
      throw new NonDeterminismError(ctx.executionId, planned.seq, "record", expected, actual);
  }
  cursor.before = position.state;
  position.state = step.state;
  position.seq = step.records.at(-1)!.seq;
  cursor.onMacrostep?.(step);
  return step.records.length;
}

// Control records (erasure) stand between macrosteps: skipped (so is one of a later schema, by its `loom.erasure.` prefix).
function skipControl(cursor: Cursor, record: StoredRecord): Consumed {
  cursor.position.seq = record.seq;
  return 1;
}

/** What the fold does with a record met at the start of a macrostep, for every record type. */
const AT_MACROSTEP_START: RecordHandlers<Cursor, Consumed> = {
  [schema.EXECUTION_STARTED]: replayMacrostep,
  [schema.EVENT_RECEIVED]: replayMacrostep,
  [schema.STEP_COMPLETED]: replayMacrostep,
  [schema.STEP_FAILED]: replayMacrostep,
  [schema.TIMER_SET]: outOfPlace,
  [schema.TRANSITION]: outOfPlace,
  // A patch marker follows its macrostep's input record, never starts one.
  [schema.PATCH_MARKED]: outOfPlace,
  // A migration stands between macrosteps: the state continues from the one it journaled (built by the new version).
  [schema.EXECUTION_MIGRATED]: (cursor, record) => {
    if (!cursor.position.state || record.seq !== cursor.position.seq + 1) return outOfPlace(cursor, record);
    cursor.position.state = restoreState(cursor.ctx.machine, record.state);
    cursor.position.seq = record.seq;
    return 1;
  },
  // app.stop journals a stopped end on its own, between macrosteps; so does an action that threw once its macrostep
  // was durable (an error end, with the state before that macrostep, as XState's actor keeps it); a done end belongs
  // to a macrostep.
  [schema.EXECUTION_ENDED]: (cursor, record) => {
    const { state, seq } = cursor.position;
    // Only a stopped end or an error end with its error stands on its own: anything else (a done end, a status the
    // schema does not know, a record retyped by a damaged or tampered log) is out of place, never folded.
    const standalone = record.status === "stopped" || (record.status === "error" && isObject(record.error));
    if (!standalone || !state || state.status !== "running" || record.seq !== seq + 1)
      return outOfPlace(cursor, record);
    const base = record.status === "error" ? (cursor.before ?? state) : state;
    cursor.position.state = { ...base, status: record.status, error: record.error, pending: {}, timers: {} };
    cursor.position.seq = record.seq;
    return 1;
  },
  [schema.ERASURE_CONTENT_DELETE_INTENDED]: skipControl,
  [schema.ERASURE_CONTENT_DELETED]: skipControl,
  // Messages the outbox delivered (ADR 0012 D4): folded out of it, so a recovery re-sends only the others.
  [schema.MESSAGES_DELIVERED]: (cursor, record) => {
    const { state } = cursor.position;
    if (!state || record.seq !== cursor.position.seq + 1 || !Array.isArray(record.messageIds))
      return outOfPlace(cursor, record);
    const delivered = new Set(record.messageIds);
    const outbox = state.outbox?.filter((message) => !delivered.has(message.messageId));
    const next: RuntimeState = { ...state };
    if (outbox?.length) next.outbox = outbox;
    else delete next.outbox;
    cursor.position.state = next;
    cursor.position.seq = record.seq;
    return 1;
  },
};

/**
 * Folds `records` (contiguous, after `from.seq`) onto `from`; calls `onMacrostep` after each replayed
 * macrostep. Throws NonDeterminismError for a gap, a record out of place or of a type the schema does
 * not know, or a macrostep whose records differ from what the planner derives.
 */
export function foldRecords(
  ctx: PlanContext,
  from: FoldPosition,
  records: readonly StoredRecord[],
  onMacrostep?: (step: Macrostep) => void,
): FoldPosition {
  // The fold starts at the last migration, as at a snapshot: what came before ran on another version.
  const migrated = records.findLastIndex((r) => r.type === schema.EXECUTION_MIGRATED);
  const start =
    migrated < 0 ? from : { state: restoreState(ctx.machine, records[migrated]!.state), seq: records[migrated]!.seq };
  const cursor: Cursor = { ctx, position: { ...start }, records, index: migrated + 1, onMacrostep };
  while (cursor.index < records.length) {
    const record = records[cursor.index]!;
    if (isJournalRecord(record)) cursor.index += foldRecord(AT_MACROSTEP_START, cursor, record);
    else if (isControlRecord(record.type)) cursor.index += skipControl(cursor, record);
    else outOfPlace(cursor, record);
  }
  return cursor.position;
}
