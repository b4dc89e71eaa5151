// The records' stored form (schema 3): what the journal writes drops the bytes a reader derives from the
// records before it, and every reader gets them back here, in one place. The runtime sees records as
// `JournalRecord` (the read form, stores/schema.ts); the stores hold the stored form.
//
// What schema 3 leaves out, written by `compactMacrostep` (one macrostep's batch, before sealing) and put
// back by `RecordExpander` (after opening), in order through the log:
// - TRANSITION `from`: always (it is the previous TRANSITION's `to`, or the state value the last
//   EXECUTION_MIGRATED continues from, or null before the first). A read that starts past the records it
//   derives from (a replay from a snapshot) leaves it absent; the replay's check needs it nowhere else.
// - TRANSITION `event`: when it is the event the macrostep's input record delivers (`xstate.init`, the
//   received event's type, `xstate.done.actor.<effectId>` / `xstate.error.actor.<effectId>` of a step
//   outcome). A step outcome whose child id is not its effect id writes `actor: <childId>` instead.
// - STEP_COMPLETED `usage`: when it is its output's own `usage` (a model reply's two token counts), in a
//   macrostep whose TRANSITION is of the stored form (no `from`): that is how a reader tells it from a
//   record of schema 1 or 2, which never omits it.
// Records of schema 1 and 2 carry every field: the expander passes them through unchanged. So does it a
// sealed record (security.crypto), which is opened before it is expanded.
import {
  EXECUTION_MIGRATED,
  EXECUTION_STARTED,
  EVENT_RECEIVED,
  isMacrostepInputType,
  STEP_COMPLETED,
  STEP_FAILED,
  TRANSITION,
  type StoredRecord,
} from "./schema.js";
import { usageOf } from "./usage.js";

const DONE_PREFIX = "xstate.done.actor.";
const ERROR_PREFIX = "xstate.error.actor.";

/** The state value as TRANSITION records spell it: "a", "a.b", or the leaf paths of parallel regions joined by ",". */
export function transitionValueText(value: unknown): string {
  if (typeof value === "string") return value;
  const paths: string[] = [];
  const walk = (v: unknown, prefix: string) => {
    if (typeof v === "string") paths.push(prefix + v);
    else if (v && typeof v === "object") {
      const entries = Object.entries(v);
      if (entries.length === 0) paths.push(prefix.slice(0, -1));
      for (const [k, child] of entries) walk(child, `${prefix}${k}.`);
    }
  };
  walk(value, "");
  return paths.join(",");
}

const isSealedRecord = (record: StoredRecord): boolean => typeof record.sealed === "string";

/**
 * The event type a macrostep's input record delivers, with `actor` the child id of a step outcome
 * (default: the step's effect id); undefined when the record does not say (sealed, malformed, or not an input).
 */
function inputEventType(input: StoredRecord | undefined, actor?: unknown): string | undefined {
  if (!input || isSealedRecord(input)) return undefined;
  if (actor !== undefined && typeof actor !== "string") return undefined;
  switch (input.type) {
    case EXECUTION_STARTED:
      return actor === undefined ? "xstate.init" : undefined;
    case EVENT_RECEIVED: {
      const event: unknown = input.event;
      const type = typeof event === "object" && event !== null && "type" in event ? event.type : undefined;
      return actor === undefined && typeof type === "string" ? type : undefined;
    }
    case STEP_COMPLETED:
    case STEP_FAILED: {
      const child = actor ?? input.effectId;
      if (typeof child !== "string") return undefined;
      return `${input.type === STEP_COMPLETED ? DONE_PREFIX : ERROR_PREFIX}${child}`;
    }
    default:
      return undefined;
  }
}

/** A model reply's token counts as STEP_COMPLETED.usage journals them (an array has none), or undefined. */
const outputUsage = (output: unknown) => (Array.isArray(output) ? undefined : usageOf(output));

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

// A TRANSITION of the stored form: no `from` (every record of schema 1 and 2 has one, null before the first).
const isStoredForm = (record: StoredRecord) => record.type === TRANSITION && !Object.hasOwn(record, "from");

/**
 * One macrostep's records (its input first, as the planner returns them) in the stored form of schema 3.
 * A batch that is not a macrostep's (a control record, a migration, a stop) is returned as it is. The
 * records given are not changed.
 */
export function compactMacrostep(records: readonly StoredRecord[]): StoredRecord[] {
  const input = records[0];
  if (!input || !isMacrostepInputType(input.type) || !records.some((r) => r.type === TRANSITION)) return [...records];
  return records.map((record, i) => {
    if (
      i === 0 &&
      record.type === STEP_COMPLETED &&
      Object.hasOwn(record, "usage") &&
      record.usage !== undefined &&
      sameJson(outputUsage(record.output), record.usage)
    ) {
      const { usage: _usage, ...rest } = record;
      return rest;
    }
    if (record.type !== TRANSITION) return record;
    const { seq, at, type, from: _from, to, event, ...rest } = record;
    if (event === inputEventType(input)) return { seq, at, type, to, ...rest };
    const prefix = input.type === STEP_COMPLETED ? DONE_PREFIX : ERROR_PREFIX;
    if (typeof event === "string" && event.startsWith(prefix)) {
      const actor = event.slice(prefix.length);
      if (inputEventType(input, actor) === event) return { seq, at, type, to, actor, ...rest };
    }
    return { seq, at, type, to, event, ...rest };
  });
}

/**
 * Reads stored records back in the read form, in log order: `expand` the records of a log as they come
 * (from its first record, or from any seq: what the records before it would derive is then left
 * absent), one call per chunk read, each chunk whole appends (a model step's usage is told by the
 * transition appended with it). Records of schema 1 and 2, and sealed ones, come back unchanged.
 */
export class RecordExpander {
  // The state value the next TRANSITION moves from: undefined while no record read says it.
  private from: string | null | undefined;
  // The input record of the macrostep being read (undefined: none read, or sealed).
  private input: StoredRecord | undefined;

  expand(records: readonly StoredRecord[]): StoredRecord[] {
    const out: StoredRecord[] = new Array<StoredRecord>(records.length);
    for (let i = 0; i < records.length; i++) out[i] = this.next(records[i]!, records, i);
    return out;
  }

  private next(record: StoredRecord, records: readonly StoredRecord[], i: number): StoredRecord {
    if (isMacrostepInputType(record.type)) this.input = isSealedRecord(record) ? undefined : record;
    if (record.type === EXECUTION_STARTED) this.from = null;
    if (record.type === EXECUTION_MIGRATED) this.from = migratedValue(record);
    if (record.type === TRANSITION) return this.transition(record);
    if (
      record.type === STEP_COMPLETED &&
      !isSealedRecord(record) &&
      !Object.hasOwn(record, "usage") &&
      storedFormFollows(records, i)
    ) {
      const usage = outputUsage(record.output);
      if (usage) return { ...record, usage };
    }
    return record;
  }

  private transition(record: StoredRecord): StoredRecord {
    const from = this.from;
    this.from = typeof record.to === "string" || record.to === null ? record.to : undefined;
    if (isSealedRecord(record) || !isStoredForm(record)) return record;
    const { seq, at, type, to, actor, ...rest } = record;
    const event = Object.hasOwn(rest, "event") ? rest.event : inputEventType(this.input, actor);
    if (event === undefined)
      return {
        seq,
        at,
        type,
        ...(from === undefined ? {} : { from }),
        to,
        ...(actor === undefined ? {} : { actor }),
        ...rest,
      };
    return { seq, at, type, ...(from === undefined ? {} : { from }), to, event, ...rest };
  }
}

/** The read form of `records` (a log from its start, or from any seq; see RecordExpander). */
export function expandRecords(records: readonly StoredRecord[]): StoredRecord[] {
  return new RecordExpander().expand(records);
}

// True when the macrostep of the input at `i` has a TRANSITION of the stored form (before the next input).
function storedFormFollows(records: readonly StoredRecord[], i: number): boolean {
  for (let k = i + 1; k < records.length; k++) {
    const record = records[k]!;
    if (record.type === TRANSITION) return isStoredForm(record);
    if (isMacrostepInputType(record.type)) return false;
  }
  return false;
}

// The state value an EXECUTION_MIGRATED continues from (its persisted state's machine value), as a TRANSITION spells it.
function migratedValue(record: StoredRecord): string | undefined {
  if (isSealedRecord(record)) return undefined;
  const state: unknown = record.state;
  const machine = typeof state === "object" && state !== null && "machine" in state ? state.machine : undefined;
  const value = typeof machine === "object" && machine !== null && "value" in machine ? machine.value : undefined;
  return value === undefined ? undefined : transitionValueText(value);
}
