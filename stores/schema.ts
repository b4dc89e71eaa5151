// The journal's record schema (EVENT_SCHEMA). Versioned: a change that alters how an old log replays
// bumps EVENT_SCHEMA.version and keeps replaying the old one (golden journals in spec/fixtures/).
//
// A record is a member of the discriminated union `JournalRecord`, keyed by `type`. A new record type is
// one interface added to `RecordsByType`: EVENT_SCHEMA, and every fold written as a `RecordHandlers` map
// (actors/journal/replay.ts), then fail to compile until they handle it.

/** Record types, namespaced like XState's own constants. */
export const EXECUTION_STARTED = "loom.execution.started";
/** Record type: an external event or a fired timer, journaled before the machine sees it. */
export const EVENT_RECEIVED = "loom.event.received";
/** Record type: an effect step's output, by step id. */
export const STEP_COMPLETED = "loom.step.completed";
/** Record type: an effect step's error, by step id, with where in the chain it stopped. */
export const STEP_FAILED = "loom.step.failed";
/** Record type: a delayed event and its due time. */
export const TIMER_SET = "loom.timer.set";
/** Record type: one macrostep's transition (from, to, event type). */
export const TRANSITION = "loom.transition";
/** Record type: the execution's end: done, error or stopped. */
export const EXECUTION_ENDED = "loom.execution.ended";
/** Record type: a patch (`patched(changeId)`) taken by this execution, journaled once, in the macrostep that first asked. */
export const PATCH_MARKED = "loom.patch.marked";
/** Record type: the execution moved to another version of its logic, with the state it continues from. */
export const EXECUTION_MIGRATED = "loom.execution.migrated";
/** Control record: the messages of this execution's outbox that reached their receivers' journals (ADR 0012 D4). Since schema 4. */
export const MESSAGES_DELIVERED = "loom.messages.delivered";
/** Control record: an erasure's plan, journaled before the shred. */
export const ERASURE_CONTENT_DELETE_INTENDED = "loom.erasure.content-delete-intended";
/** Control record: what an erasure deleted and retained, naming its intent. */
export const ERASURE_CONTENT_DELETED = "loom.erasure.content-deleted";

/**
 * A record as the storage SPIs carry it: `{ seq, at, type }` and any JSON fields. Stores append and
 * return these without reading them (a sealed record, a record of a future type); the runtime narrows
 * them to `JournalRecord` with `isJournalRecord` where it reads them.
 */
export interface StoredRecord {
  seq: number;
  /** Milliseconds since the epoch, from the app's clock. */
  at: number;
  type: string;
  [field: string]: unknown;
}

/** The fields every record carries: its position in the log and its time. */
// The records are type aliases, not interfaces: an alias of an object type is assignable to the loose
// `StoredRecord` (an interface would lack its implicit index signature), so the runtime appends them as they are.
export type RecordBase = {
  /** Contiguous from 1 within its execution. */
  seq: number;
  /** Milliseconds since the epoch, from the app's clock. */
  at: number;
};

/** An error as journaled: plain JSON (structurally `SerializedError` of actors/errors.ts; a thrown plain object's JSON may lack a name and message). */
export interface RecordedError {
  name?: string;
  message?: string;
  code?: string;
  [fact: string]: unknown;
}

/** An event as journaled: plain JSON with a string `type` and the fields it was sent with (structurally an XState `EventObject`). */
export interface RecordedEvent {
  type: string;
}

/** An execution's first record (seq 1): the logic it runs and its input. */
export type ExecutionStartedRecord = RecordBase & {
  type: typeof EXECUTION_STARTED;
  /** The machine's id. */
  logicId: string;
  /** The machine's definition hash: its version when it declares none (actors/journal/versions.ts). */
  machineHash: string;
  /**
   * The logic's declared version (XState's `version`, `meta.version`, or agentLoop$'s `version`); absent when
   * it declares none (then the execution is not pinned: it resumes on its logic id's newest definition). Since schema 2.
   */
  version?: string;
  /** The subject whose personal data the execution holds. */
  subject?: string;
  /** The start input (`null` for none). */
  input: unknown;
  /** `EVENT_SCHEMA.version` the log was written with. */
  schema: number;
  /** A child execution's parent: its execution, the child id it was invoked or spawned under, its step. Since schema 4. */
  parent?: { executionId: string; childId: string; stepId: string; syncSnapshot?: boolean };
  /** A child execution's root: the execution at the top of its tree. Since schema 4. */
  root?: string;
};

/** An external event (or a fired timer's event), journaled before the machine sees it. */
export type EventReceivedRecord = RecordBase & {
  type: typeof EVENT_RECEIVED;
  event: RecordedEvent;
  /** Set when the event is a journaled timer firing: the timer it disarms. */
  timerId?: string;
  /**
   * Set when the event is a message from another execution of the tree (sendTo, sendParent): its sender and id; or
   * from a live source of this execution (a callback or observable actor): its child id. Since schema 4.
   */
  from?: { executionId: string; messageId: string } | { source: string };
};

/** An effect step's output, keyed by its deterministic step id. */
export type StepCompletedRecord = RecordBase & {
  type: typeof STEP_COMPLETED;
  stepId: string;
  effectId: string;
  /** Plain JSON; absent when the step returned undefined. */
  output?: unknown;
  /** Read by old logs only: a digest of the step's input. */
  inputDigest?: string;
  /** A model step's token usage (the capability ring meters it). Stored (schema 3) without it when it is its output's `usage`. */
  usage?: { inputTokens: number; outputTokens: number };
};

/** An effect step's error, keyed by its step id. */
export type StepFailedRecord = RecordBase & {
  type: typeof STEP_FAILED;
  stepId: string;
  effectId: string;
  error: RecordedError;
  /** The innermost chain layer the step reached (a `ChainLayer` of machines/effectChain.ts). */
  stoppedAt?: string;
};

/** A delayed event and its due time, armed by a macrostep. */
export type TimerSetRecord = RecordBase & {
  type: typeof TIMER_SET;
  timerId: string;
  dueAt: number;
  event: RecordedEvent;
  /**
   * A delayed `sendTo` (schema 4): the receiver the event goes to when the timer fires, a child execution's id or a
   * live source's child id; absent: the event is the execution's own (a delayed `raise`, `after`).
   */
  to?: TimerTarget;
};

/** The receiver of a delayed `sendTo`: another execution of the tree, or one of this execution's live sources. */
export type TimerTarget = string | { source: string };

/**
 * One macrostep's transition: the state values before and after (`null` before the first) and the event's type.
 * Stored (schema 3) without `from` and, where the input record derives it, without `event`: a reader gets them
 * back (stores/recordFormat.ts); a read that starts after the record `from` derives from leaves it absent.
 */
export type TransitionRecord = RecordBase & {
  type: typeof TRANSITION;
  from: string | null;
  to: string | null;
  event: string;
  /** The first transition's digest of the start input (absent in logs from before it was journaled). */
  inputDigest?: string;
  /** A digest of the context after the transition, with `execution.checkDeterminism` (ADR 0012 D8); absent without it. */
  contextDigest?: string;
};

/** The execution's end: done (with its output), error, or stopped. */
export type ExecutionEndedRecord = RecordBase & {
  type: typeof EXECUTION_ENDED;
  status: "done" | "error" | "stopped";
  output?: unknown;
  error?: RecordedError;
};

/**
 * A patch this execution takes (ADR-free summary in docs/upgrades.md): written right after the input record
 * of the live macrostep in which `patched(changeId)` (or `deprecatePatch`) was first asked, once per
 * execution. A replay takes the new path exactly where the log has the marker; an execution whose log
 * has none keeps the old path. Since schema 2.
 */
export type PatchMarkedRecord = RecordBase & {
  type: typeof PATCH_MARKED;
  changeId: string;
};

/**
 * An explicit migration (`migrate(app, ...)`) from one version of the execution's logic to another, journaled
 * between two macrosteps: the execution continues on `version` from `state` (the runtime state as a
 * snapshot persists it, built by the new version). A replay starts at the last one, like a snapshot, so the
 * records before it need not replay on the new version. Since schema 2.
 */
export type ExecutionMigratedRecord = RecordBase & {
  type: typeof EXECUTION_MIGRATED;
  /** The version it ran before (absent: none declared). */
  fromVersion?: string;
  /** The version it runs from now on (absent: none declared). */
  version?: string;
  /** The new definition's hash. */
  machineHash: string;
  /** The persisted runtime state it continues from. */
  state: unknown;
};

/** Control record: an erasure's plan, journaled before the shred. */
export type ErasureContentDeleteIntendedRecord = RecordBase & {
  type: typeof ERASURE_CONTENT_DELETE_INTENDED;
  subject: string;
  addresses: string[];
  /** The content store's touch clock when planned; `null` for a store without one. */
  touchCutoff: number | null;
};

/** Control record: what an erasure deleted and retained, naming its intent's seq. */
export type ErasureContentDeletedRecord = RecordBase & {
  type: typeof ERASURE_CONTENT_DELETED;
  subject: string;
  intentSeq: number;
  deleted: number;
  retained: number;
};

/** Control record: messages of the outbox that reached their receivers' journals (folded out of the outbox by replay). */
export type MessagesDeliveredRecord = RecordBase & {
  type: typeof MESSAGES_DELIVERED;
  messageIds: string[];
};

/** Every record type and its record: the one list a new record type is added to. */
interface RecordsByType {
  [EXECUTION_STARTED]: ExecutionStartedRecord;
  [EVENT_RECEIVED]: EventReceivedRecord;
  [STEP_COMPLETED]: StepCompletedRecord;
  [STEP_FAILED]: StepFailedRecord;
  [TIMER_SET]: TimerSetRecord;
  [TRANSITION]: TransitionRecord;
  [EXECUTION_ENDED]: ExecutionEndedRecord;
  [PATCH_MARKED]: PatchMarkedRecord;
  [EXECUTION_MIGRATED]: ExecutionMigratedRecord;
  [ERASURE_CONTENT_DELETE_INTENDED]: ErasureContentDeleteIntendedRecord;
  [ERASURE_CONTENT_DELETED]: ErasureContentDeletedRecord;
  [MESSAGES_DELIVERED]: MessagesDeliveredRecord;
}

/** A record type: one of the constants above. */
export type RecordType = keyof RecordsByType;

/**
 * One journal record, as `app.log` reads it: a discriminated union keyed by `type`. Narrow it
 * (`record.type === STEP_COMPLETED`) for its typed fields; any other field (one a later schema adds, or
 * a hand-edited log's) reads as `unknown`.
 */
export type JournalRecord = { [K in RecordType]: RecordsByType[K] & { [field: string]: unknown } }[RecordType];

/** The member of `JournalRecord` of one type (what a fold handler takes). */
export type RecordOf<K extends RecordType> = Extract<JournalRecord, { type: K }>;

/** A record (of the types `K`, default any) before the journal gives it its `seq` and `at`: exactly its fields, without them. */
export type RecordBody<K extends RecordType = RecordType> = { [T in K]: Omit<RecordsByType[T], "seq" | "at"> }[K];

/**
 * One handler per record type: a fold written as this map does not compile until it handles every type.
 * `S` is what the handler folds onto, `T` what it returns.
 */
export type RecordHandlers<S, T> = { readonly [K in RecordType]: (state: S, record: RecordOf<K>) => T };

/** The records that start a macrostep: an input the machine takes. The planner writes the others itself. */
export type MacrostepInput = RecordOf<
  typeof EXECUTION_STARTED | typeof EVENT_RECEIVED | typeof STEP_COMPLETED | typeof STEP_FAILED
>;

const MACROSTEP_INPUT_TYPES: ReadonlySet<string> = new Set([
  EXECUTION_STARTED,
  EVENT_RECEIVED,
  STEP_COMPLETED,
  STEP_FAILED,
]);

/** True for a record type that starts a macrostep (a sealed record keeps its type readable). */
export function isMacrostepInputType(type: string): boolean {
  return MACROSTEP_INPUT_TYPES.has(type);
}

/** True for the records that start a macrostep. */
export function isMacrostepInput(record: JournalRecord): record is MacrostepInput {
  return MACROSTEP_INPUT_TYPES.has(record.type);
}

/** Calls the handler of `record`'s type (the one place the map is indexed, so each handler sees its own type). */
export function foldRecord<S, T>(handlers: RecordHandlers<S, T>, state: S, record: JournalRecord): T {
  return (handlers[record.type] as (state: S, record: JournalRecord) => T)(state, record);
}

// A record's fields beside { seq, at, type }, as EVENT_SCHEMA spells them: "name", or "name?" when optional.
type FieldsOf<R> = {
  [F in Exclude<keyof R, keyof RecordBase | "type">]-?: F extends string
    ? Pick<R, F> extends Required<Pick<R, F>>
      ? F
      : `${F}?`
    : never;
}[Exclude<keyof R, keyof RecordBase | "type">];

// Each type's field list, checked both ways against its interface: an unknown or missing field, or a
// missing type, does not compile.
type SchemaTypes = { readonly [K in RecordType]: readonly FieldsOf<RecordsByType[K]>[] };
function schemaTypes<const T extends SchemaTypes>(
  types: T & { [K in RecordType]: Exclude<FieldsOf<RecordsByType[K]>, T[K][number]> extends never ? unknown : never },
): T {
  return types;
}

/** The versioned record schema: each type and the fields it carries beside `{ seq, at, type }`. */
// Version 2 (issue 16) added EXECUTION_STARTED's optional `version`, PATCH_MARKED and EXECUTION_MIGRATED; a version-1 log
// replays unchanged (it has neither: its execution takes no patch and is pinned to no version).
// Version 3 (ADR 0009) changed the stored form only: a TRANSITION is stored without `from` and, where the input record
// derives it, without `event` (an `actor` child id instead where only that differs), and a model step's STEP_COMPLETED
// without the `usage` its output already holds (stores/recordFormat.ts). These types are the read form every reader
// gets back; records of versions 1 and 2 are stored in it and read unchanged.
// Version 4 (ADR 0012) added child executions: EXECUTION_STARTED's optional `parent` and `root`, EVENT_RECEIVED's
// optional `from`, TIMER_SET's optional `to` (a delayed sendTo), and the control record MESSAGES_DELIVERED; a log of
// versions 1 to 3 has none and replays unchanged.
export const EVENT_SCHEMA = {
  version: 4,
  types: schemaTypes({
    [EXECUTION_STARTED]: ["logicId", "machineHash", "version?", "subject?", "input", "schema", "parent?", "root?"],
    [EVENT_RECEIVED]: ["event", "timerId?", "from?"],
    [STEP_COMPLETED]: ["stepId", "effectId", "output?", "inputDigest?", "usage?"],
    [STEP_FAILED]: ["stepId", "effectId", "error", "stoppedAt?"],
    [TIMER_SET]: ["timerId", "dueAt", "event", "to?"],
    [TRANSITION]: ["from", "to", "event", "inputDigest?", "contextDigest?"],
    [EXECUTION_ENDED]: ["status", "output?", "error?"],
    [PATCH_MARKED]: ["changeId"],
    [EXECUTION_MIGRATED]: ["fromVersion?", "version?", "machineHash", "state"],
    [ERASURE_CONTENT_DELETE_INTENDED]: ["subject", "addresses", "touchCutoff"],
    [ERASURE_CONTENT_DELETED]: ["subject", "intentSeq", "deleted", "retained"],
    [MESSAGES_DELIVERED]: ["messageIds"],
  }),
} as const;

/**
 * True for a record of a type this schema knows. It checks the `type` only: the fields are as the runtime
 * wrote them (a sealed record's payload is authenticated when opened), and the readers that must survive a
 * tampered log check what they use (the planner checks a received event's shape).
 */
export function isJournalRecord(record: StoredRecord | JournalRecord): record is JournalRecord {
  return Object.hasOwn(EVENT_SCHEMA.types, record.type);
}

/**
 * The records a store returned, read as the union: the runtime's one trust boundary for the log, as the
 * seal is for a record's payload. Nothing is checked or dropped here (a record of a type this schema does
 * not know is passed on as stored); the replay fold refuses such a record with `isJournalRecord`.
 */
export function readAsJournal(records: readonly StoredRecord[]): JournalRecord[] {
  return records as JournalRecord[];
}
