// The journal's record schema (EVENT_SCHEMA). Versioned: a change that alters how an old log replays
// bumps EVENT_SCHEMA.version and keeps replaying the old one (golden journals in spec/fixtures/).

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
/** Control record: an erasure's plan, journaled before the shred. */
export const ERASURE_CONTENT_DELETE_INTENDED = "loom.erasure.content-delete-intended";
/** Control record: what an erasure deleted and retained, naming its intent. */
export const ERASURE_CONTENT_DELETED = "loom.erasure.content-deleted";

/** The versioned record schema: each type and the fields it carries beside `{ seq, at, type }`. */
export const EVENT_SCHEMA = {
  version: 1,
  types: {
    [EXECUTION_STARTED]: ["logicId", "machineHash", "subject?", "input", "schema"],
    [EVENT_RECEIVED]: ["event", "timerId?"],
    [STEP_COMPLETED]: ["stepId", "effectId", "output", "inputDigest?", "usage?"],
    [STEP_FAILED]: ["stepId", "effectId", "error", "stoppedAt?"],
    [TIMER_SET]: ["timerId", "dueAt", "event"],
    [TRANSITION]: ["from", "to", "event", "inputDigest?"],
    [EXECUTION_ENDED]: ["status", "output?", "error?"],
    [ERASURE_CONTENT_DELETE_INTENDED]: ["subject", "addresses", "touchCutoff"],
    [ERASURE_CONTENT_DELETED]: ["subject", "intentSeq", "deleted", "retained"],
  },
} as const;

export type RecordType = keyof (typeof EVENT_SCHEMA)["types"];
