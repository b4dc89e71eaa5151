// The machines layer's reserved keys and prefixes, each defined once: the helpers, the runtime and the
// CLI read the same constants, so a marker is never spelled twice.

/** The prefix of the runtime's own ids (record types, internal executions and effects): `loom.`. */
export const RUNTIME_ID_PREFIX = "loom.";

// The reserved keys of values that pass through machines. None is ever passed to an effect as data.
const RESERVED_KEYS = {
  /** Names a step in `stepInput`. */
  step: "__loomStep",
  /** Records the role given by `invokeAs`. */
  taskKind: "__loomTaskKind",
  /** Marks untrusted content (`tainted(value, origin)`). */
  taint: "__loomTainted",
  /** Marks a claim-check envelope. */
  claimCheck: "__loomClaimCheck",
  /** Marks a content reference (an address in the content store). */
  contentRef: "__loomContent",
} as const;

export const {
  step: STEP_KEY,
  taskKind: TASK_KIND_KEY,
  taint: TAINT_KEY,
  claimCheck: CLAIM_CHECK_KEY,
  contentRef: CONTENT_REF_KEY,
} = RESERVED_KEYS;

/** The event a human's decision on a parked tool call is sent as: `{ type: "TOOL_APPROVAL", toolCallId, approved, reason? }`. */
export const TOOL_APPROVAL_EVENT = "TOOL_APPROVAL";
