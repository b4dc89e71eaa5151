// The runtime's own ids, prefixes and codes, built in one place: every module that names a maintenance
// execution or recognises a control record calls these, so a guard and the coordinator never disagree
// on how an id is spelled (a subject such as `user@example.com` is URI-encoded in its coordinator's id);
// every error and warning code is spelled here once.
import { RUNTIME_ID_PREFIX } from "../machines/helpers/constants.js";
import { TAINT_SCAN_INCOMPLETE } from "../machines/helpers/taint.js";
import { SWEEP_LOGIC_ID } from "../machines/helpers/maintenanceIds.js";
import { STORE_ERROR_CODES } from "../stores/constants.js";

export { RUNTIME_ID_PREFIX, STORE_ERROR_CODES };

/** The prefix of every erase coordinator's execution id. */
export const ERASE_COORDINATOR_ID_PREFIX = `${RUNTIME_ID_PREFIX}erase:`;

/** The prefix of the coordinators' execution ids for one subject: `loom.erase:<URI-encoded subject>:`. */
export function eraseCoordinatorPrefix(subject: string): string {
  return `${ERASE_COORDINATOR_ID_PREFIX}${encodeURIComponent(subject)}:`;
}

/** The execution id of a subject's `n`-th erase coordinator: `loom.erase:<URI-encoded subject>:<n>`. */
export function eraseCoordinatorId(subject: string, n: number): string {
  return `${eraseCoordinatorPrefix(subject)}${n}`;
}

/** The coordinator's number `n` in an id built by `eraseCoordinatorId` for `subject`, or 0 when the id is not one. */
export function eraseCoordinatorNumber(subject: string, executionId: string): number {
  const prefix = eraseCoordinatorPrefix(subject);
  if (!executionId.startsWith(prefix)) return 0;
  const n = Number(executionId.slice(prefix.length));
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** The prefix of the control records' types (`loom.erasure.*`: erasure's intent and result). */
export const CONTROL_RECORD_PREFIX = `${RUNTIME_ID_PREFIX}erasure.`;

/** True for a control record: it stands between two macrosteps and replay skips it. */
export function isControlRecord(type: string): boolean {
  return type.startsWith(CONTROL_RECORD_PREFIX);
}

/** The prefix of every content sweep's execution id: `loom.sweep:<n>`. */
export const SWEEP_ID_PREFIX = `${SWEEP_LOGIC_ID}:`;

/** The execution id of the `n`-th content sweep: `loom.sweep:<n>`. */
export function sweepExecutionId(n: number): string {
  return `${SWEEP_ID_PREFIX}${n}`;
}

/** The sweep's number `n` in an id of the form `sweepExecutionId` builds, or undefined when the id is not one. */
export function sweepNumber(executionId: string): number | undefined {
  const digits = executionId.startsWith(SWEEP_ID_PREFIX) ? executionId.slice(SWEEP_ID_PREFIX.length) : "";
  return /^\d+$/.test(digits) ? Number(digits) : undefined;
}

/** The execution id `invokeTransient` calls carry: they belong to no execution and are never journaled. */
export const TRANSIENT_EXECUTION_ID = "loom:transient";

/** The record type a sealed snapshot state is sealed as (its AAD names it; it is never appended to a log). */
export const SNAPSHOT_RECORD_TYPE = `${RUNTIME_ID_PREFIX}snapshot`;

/**
 * The stable `code` of every runtime error (`LoomworkError.code`), each defined once: the classes take
 * their code from here, and the chain, the retries and the CLI branch on the same constants.
 */
export const RUNTIME_ERROR_CODES = {
  /** `NonDeterminismError`: replay diverged from the log. */
  nonDeterminism: "LOOM_NONDETERMINISM",
  /** `ConfigError`: bad configuration, refused at boot. */
  config: "LOOM_CONFIG",
  /** `UnknownEffectError`: a machine invokes an effect the config does not register. */
  unknownEffect: "LOOM_UNKNOWN_EFFECT",
  /** `DuplicateExecutionError`: `start` with an id that already has a log. */
  duplicateExecution: "LOOM_DUPLICATE_EXECUTION",
  /** `UnknownExecutionError`: an id with no log. */
  lifecycleNotLoaded: "LOOM_LIFECYCLE_NOT_LOADED",
  unknownExecution: "LOOM_UNKNOWN_EXECUTION",
  /** `ExecutionFailedError`: the execution ended in error. */
  executionFailed: "LOOM_EXECUTION_FAILED",
  /** `ExecutionStoppedError`: the execution was stopped. */
  executionStopped: "LOOM_EXECUTION_STOPPED",
  /** `NonJsonOutputError`: an effect returned a value with no JSON form. */
  nonJsonOutput: "LOOM_NON_JSON_OUTPUT",
  /** `ChildLimitError`: a child execution past `execution.children`'s depth, or a macrostep starting more children than its fan-out. */
  childLimit: "LOOM_CHILD_LIMIT",
  duplicateSystemId: "LOOM_DUPLICATE_SYSTEM_ID",
  /** `AppClosedError`: the app was closed. */
  appClosed: "LOOM_APP_CLOSED",
  /** `ModelReplyError`: a provider's reply is not a ModelReply. */
  modelReply: "LOOM_MODEL_REPLY",
  /** `AiSdkReplyError`: an AI SDK reply that cannot be read (a tool call's input is not JSON). */
  aiSdkReply: "LOOM_AI_SDK_REPLY",
  /** `ToolInputError`: a tool's input failed its schema; the model receives it as the tool's error result. */
  toolInput: "LOOM_TOOL_INPUT",
  /** `McpConnectionError`: an MCP server could not be reached, or its connection dropped during a call (loomwork/mcp). */
  mcpConnection: "LOOM_MCP_CONNECTION",
  /** `ModelCallError`: a provider call failed, after the retries a retryable error gets. */
  modelCall: "LOOM_MODEL_CALL",
  /** `EffectStoppedError`: a step stopped before it ran (the kill switch, a stopped execution). */
  effectStopped: "LOOM_EFFECT_STOPPED",
  /** `EffectTimeoutError`: an attempt ran past `timeoutMiddleware`'s limit. */
  effectTimeout: "LOOM_EFFECT_TIMEOUT",
  /** `GrantDeniedError`: the capability ring grants the step no such effect. */
  grantDenied: "LOOM_GRANT_DENIED",
  /** `QuotaExceededError`: the execution spent its quota. */
  quotaExceeded: "LOOM_QUOTA_EXCEEDED",
  /** `GuardRefusedError`: `capabilities.guardRequest` refused a model request. */
  guardRefused: "LOOM_GUARD_REFUSED",
  /** `SummarizerEmptyError`: the summarizer returned no text. */
  summarizerEmpty: "LOOM_SUMMARIZER_EMPTY",
  /** `HistoryInUseError`: deleting the history of an execution that runs in this app. */
  historyInUse: "LOOM_HISTORY_IN_USE",
  /** `ErasureInProgressError`: a start or resume for a subject being erased. */
  erasureInProgress: "LOOM_ERASURE_IN_PROGRESS",
  /** `UnknownLogicVersionError`: a resume needs a logic version this app does not hold. */
  unknownLogicVersion: "LOOM_UNKNOWN_LOGIC_VERSION",
  /** `MigrationRefusedError`: `migrate(app, ...)` cannot move this execution (running here, ended, a step in flight, another logic). */
  migrationRefused: "LOOM_MIGRATION_REFUSED",
  /** `SubmitConflictError`: `app.submit` of an id whose journaled start differs, or that this app runs itself. */
  submitConflict: "LOOM_SUBMIT_CONFLICT",
  /** `ContentCopiesRemainError`: erasure could not delete every copy of the subject's blobs. */
  contentCopiesRemain: "LOOM_CONTENT_COPIES_REMAIN",
  /** `ReservedEventError`: an external sender sent an event type reserved for XState or the runtime (`xstate.*`, `loom.*`). */
  reservedEvent: "LOOM_RESERVED_EVENT",
  /** `ApprovalMalformedError`: a `TOOL_APPROVAL` without a non-empty string `toolCallId`, a boolean `approved`, or a string `reason`. */
  approvalMalformed: "LOOM_APPROVAL_MALFORMED",
  /** `ApprovalNotWaitingError`: a `TOOL_APPROVAL` for a call that is not waiting for a decision (decided already, unknown, ended). */
  approvalNotWaiting: "LOOM_APPROVAL_NOT_WAITING",
  /** `ApprovalAmbiguousError`: a `TOOL_APPROVAL` sent to a tree's execution for a call id that waits in two of the tree's executions. */
  approvalAmbiguous: "LOOM_APPROVAL_AMBIGUOUS",
  /** `RetainedContentMissingError`: a retained claim-check blob (never reclaimable) is not in the content store. */
  retainedContentMissing: "LOOM_RETAINED_CONTENT_MISSING",
  /** `InvalidCronError`: a schedule's cron expression does not parse (loomwork/schedules). */
  invalidCron: "LOOM_INVALID_CRON",
  /** `UnknownTimezoneError`: a schedule's timezone is not an IANA time zone this runtime knows. */
  unknownTimezone: "LOOM_UNKNOWN_TIMEZONE",
  /** `ScheduleConflictError`: a schedule id already stored with another definition (pass `replace: true` to replace it). */
  scheduleConflict: "LOOM_SCHEDULE_CONFLICT",
  /** `UnknownScheduleError`: pausing, resuming or deleting a schedule id the stores do not hold. */
  unknownSchedule: "LOOM_UNKNOWN_SCHEDULE",
} as const;

/** Every error code loomwork throws: the storage layer's and the runtime's (docs/getting-started.md, "Errors"). */
export const ERROR_CODES = { ...STORE_ERROR_CODES, ...RUNTIME_ERROR_CODES } as const;

/** One of loomwork's error codes. */
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** The `code` of every warning the runtime reports through `observability.onWarn` (or the process warning channel). */
export const WARNING_CODES = {
  /** An agent's transcript grew past `warnTranscriptBytes` without compaction. */
  agentStateGrowth: "LOOM_AGENT_STATE_GROWTH",
  /** A snapshot failed its checksum; the log is replayed instead. */
  snapshotDamaged: "LOOM_SNAPSHOT_DAMAGED",
  /** A value was too large to scan whole for taint, so it was treated as tainted (defined with the scan). */
  taintScanIncomplete: TAINT_SCAN_INCOMPLETE,
  /** Writing a snapshot failed (the run goes on; a resume replays more of the log). */
  snapshot: "LOOM_SNAPSHOT",
  /** A snapshot subscriber threw. */
  subscriber: "LOOM_SUBSCRIBER",
  /** An `app.on` listener, or an `actor.on` listener of emitted events, threw. */
  listenerFailed: "LOOM_LISTENER_FAILED",
  /** A custom action of a macrostep that had already ended the execution threw (its end was journaled first). */
  actionFailed: "LOOM_ACTION_FAILED",
  /** The inspector threw. */
  inspectFailed: "LOOM_INSPECT_FAILED",
  /** An effect's `close` threw when the app closed (the app closed anyway). */
  effectClose: "LOOM_EFFECT_CLOSE",
  /** A due tick of a schedule could not start (its logic is not held here, or the start failed): looked at again later. */
  scheduleNotFired: "LOOM_SCHEDULE_NOT_FIRED",
  /** A message between executions of a tree could not be delivered now (its receiver's journal refused it, or the app closed): a resume of the sender re-sends it. */
  messageUndelivered: "LOOM_MESSAGE_UNDELIVERED",
  /** A model reply carried no usage while `capabilities.quotas.maxTokens` is set: it metered 0 tokens (once per app). */
  modelUsageMissing: "LOOM_MODEL_USAGE_MISSING",
  /** A claim-check `onOffload` hook threw. */
  claimCheckOnOffload: "LOOM_CLAIM_CHECK_ON_OFFLOAD",
  /** The read models could not load the execution list. */
  readModelFailed: "LOOM_READ_MODEL_FAILED",
  /** A fire-and-forget `send` reached a closed app (the error's code, reported as a warning). */
  appClosed: RUNTIME_ERROR_CODES.appClosed,
  /** A fire-and-forget `send` could not be journaled. */
  sendFailed: "LOOM_SEND_FAILED",
  /** `fsStores` opened a journal directory other users can read or enter (tightened to 0700 when this user owns it). */
  journalPermissions: "LOOM_JOURNAL_PERMISSIONS",
  /** An `onWarn` sink threw while reporting another warning. */
  onWarnThrew: "LOOM_ON_WARN_THREW",
  /** A process warning with no code of its own. */
  warning: "LOOM_WARNING",
} as const;

/** How many journaled reclaim batches `sweep(app)` cuts the address space into unless told. */
export const DEFAULT_SWEEP_BATCHES = 4;
