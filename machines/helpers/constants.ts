// The machines layer's reserved keys and prefixes, each defined once: the helpers, the runtime and the
// CLI read the same constants, so a marker is never spelled twice.

/** The prefix of the runtime's own ids (record types, internal executions and effects): `loom.`. */
export const RUNTIME_ID_PREFIX = "loom.";

/** The key under which `stepInput` names a step; reserved, never passed to the effect. */
export const STEP_KEY = "__loomStep";

/** The key under which `invokeAs` records the role; reserved, never passed to the effect. */
export const TASK_KIND_KEY = "__loomTaskKind";

/** The key that marks untrusted content (`tainted(value, origin)`). */
export const TAINT_KEY = "__loomTainted";

/** The key that marks a claim-check envelope. */
export const CLAIM_CHECK_KEY = "__loomClaimCheck";

/** The key that marks a content reference (an address in the content store). */
export const CONTENT_REF_KEY = "__loomContent";

/** The event a human's decision on a parked tool call is sent as: `{ type: "TOOL_APPROVAL", toolCallId, approved, reason? }`. */
export const TOOL_APPROVAL_EVENT = "TOOL_APPROVAL";
