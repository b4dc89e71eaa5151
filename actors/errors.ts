// Runtime errors. Each carries the facts as fields and says what to do in its message; each takes its
// `code` from RUNTIME_ERROR_CODES (actors/constants.ts).
import { LoomworkError, LoomworkTypeError } from "../stores/errors.js";
import { RUNTIME_ERROR_CODES } from "./constants.js";

/** Replay met a step id, transition or timer that the log does not have at that position. */
export class NonDeterminismError extends LoomworkError {
  static override readonly name: string = "NonDeterminismError";
  readonly executionId: string;
  readonly seq: number;
  readonly expected: unknown;
  readonly actual: unknown;
  constructor(executionId: string, seq: number, what: string, expected: unknown, actual: unknown) {
    super(
      RUNTIME_ERROR_CODES.nonDeterminism,
      `Execution "${executionId}" diverged from its log at seq ${seq}: the log has ${what} ${JSON.stringify(expected)} ` +
        `but replaying the machine produced ${JSON.stringify(actual)}. The machine or its inputs changed since the run ` +
        `was journaled; give the new definition a version and keep the old one in logics, or guard the change with patched() ` +
        `(docs/upgrades.md), and check deploys with checkReplay(app, logic) (loomwork/upgrades).`,
    );
    this.executionId = executionId;
    this.seq = seq;
    this.expected = expected;
    this.actual = actual;
  }
}

/**
 * Bad configuration, refused at boot (`createApp`) or at `start`, never mid-run. A `TypeError` (and a
 * `LoomworkError`): code that catches `TypeError` from `createApp` keeps working.
 */
export class ConfigError extends LoomworkTypeError {
  static override readonly name: string = "ConfigError";
  /** The option at fault, e.g. `execution.snapshotEvery`. */
  readonly path: string;
  /** `code`: a refusal of a bad argument that has a code of its own (the event refusals below); LOOM_CONFIG otherwise. */
  constructor(path: string, message: string, code: string = RUNTIME_ERROR_CODES.config) {
    super(code, `loomwork config "${path}": ${message}`);
    this.path = path;
  }
}

// The refusals of an external event (actors/journal/externalEvents.ts). Each is a ConfigError with the path
// `send.event` and a code of its own: whoever treats a ConfigError from a send as "the event is refused,
// do not retry it" (the fleet worker drops the inbox row) treats these the same way.

/**
 * An external sender (app code, the bridge, the control socket, the fleet inbox, the CLI) sent an event
 * whose type is reserved for XState (`xstate.*`, `@xstate.*`) or the runtime (`loom.*`). Nothing was
 * journaled: those events are made by the runtime from its own records (a step's outcome, a timer), never
 * taken from a sender.
 */
export class ReservedEventError extends ConfigError {
  static override readonly name: string = "ReservedEventError";
  constructor(
    readonly eventType: string,
    /** The reserved prefix the type starts with. */
    readonly prefix: string,
    readonly executionId?: string,
  ) {
    super(
      "send.event",
      `event type "${eventType}"${executionId === undefined ? "" : ` sent to execution "${executionId}"`} is reserved: "${prefix}*" events are made by ` +
        `XState and the runtime from the journal (a step's outcome, a timer), never sent from outside. Send one of the machine's own event types.`,
      RUNTIME_ERROR_CODES.reservedEvent,
    );
  }
}

/** The machine names an effect the app's `effects` does not register. */
export class UnknownEffectError extends LoomworkError {
  static override readonly name: string = "UnknownEffectError";
  /** The first source missing (`missing[0]`). */
  readonly effectId: string;
  /** Every source the machine invokes that is neither a registered effect nor a machine. */
  readonly missing: string[];
  readonly logicId: string;
  constructor(logicId: string, effectId: string | string[], known: string[]) {
    const missing = typeof effectId === "string" ? [effectId] : effectId;
    const names = missing.map((m) => `"${m}"`).join(", ");
    super(
      RUNTIME_ERROR_CODES.unknownEffect,
      `Machine "${logicId}" invokes ${names}, which ${missing.length > 1 ? "are" : "is"} neither an effect the config registers ` +
        `(registered: ${known.length ? known.join(", ") : "none"}) nor a state machine nor a callback or observable actor. Register a promise actor as an effect ` +
        `(effects: { "${missing[0]}": createToolEffect(...) }); a state machine (in setup({ actors }), inline, or in logics) ` +
        `runs as a child execution, and callback and observable actors run live (docs/actors.md).`,
    );
    this.effectId = missing[0]!;
    this.missing = missing;
    this.logicId = logicId;
  }
}

/**
 * A resume of an execution pinned to a logic version this app does not hold: refused before any record is
 * replayed (never a late NonDeterminismError). Hold the version in `defineConfig({ logics })` beside the newer one.
 */
export class UnknownLogicVersionError extends LoomworkError {
  static override readonly name: string = "UnknownLogicVersionError";
  constructor(
    readonly executionId: string,
    readonly logicId: string,
    /** The version the execution started on (its EXECUTION_STARTED record). */
    readonly version: string,
    /** The versions of `logicId` this app holds (an undeclared one as `#<definition hash>`). */
    readonly available: readonly string[],
  ) {
    super(
      RUNTIME_ERROR_CODES.unknownLogicVersion,
      `Execution "${executionId}" started on version "${version}" of logic "${logicId}", which this app does not hold ` +
        `(it holds ${available.length ? available.map((v) => `"${v}"`).join(", ") : "no version of it"}). ` +
        `Add that version to defineConfig({ logics: [...] }) beside the newer one so the execution finishes on it (docs/upgrades.md).`,
    );
  }
}

/** `migrate(app, ...)` cannot move the execution: the reason says why and what to do. */
export class MigrationRefusedError extends LoomworkError {
  static override readonly name: string = "MigrationRefusedError";
  constructor(
    readonly executionId: string,
    readonly reason: string,
  ) {
    super(RUNTIME_ERROR_CODES.migrationRefused, `Cannot migrate execution "${executionId}": ${reason}.`);
  }
}

/** `start` with an execution id that already has a log, or that this app starts or resumes at the moment. */
export class DuplicateExecutionError extends LoomworkError {
  static override readonly name: string = "DuplicateExecutionError";
  readonly executionId: string;
  constructor(executionId: string) {
    super(
      RUNTIME_ERROR_CODES.duplicateExecution,
      `Execution "${executionId}" already exists. Use app.resume("${executionId}") to continue it, or start with a new executionId.`,
    );
    this.executionId = executionId;
  }
}

/**
 * `app.submit` refused before writing or queueing anything. `field` says why: the id's journaled start has
 * another `logic` (id or definition), `subject` or `input` (the path inside it that differs is in the
 * message), or (`runner`) this app starts, resumes or runs the execution itself, so the fleet would be its
 * second runner. A resubmit with the same logic, subject and input is a no-op.
 */
export class SubmitConflictError extends LoomworkError {
  static override readonly name: string = "SubmitConflictError";
  readonly executionId: string;
  readonly field: "logic" | "subject" | "input" | "runner";
  constructor(executionId: string, field: SubmitConflictError["field"], difference: string) {
    const fix =
      field === "runner"
        ? `Let it run here (app.result("${executionId}") gives its output), or submit under a new executionId.`
        : `A resubmit must give the same logic, subject and input as the first submit or start (then it is a no-op); submit under a new executionId to run another.`;
    super(
      RUNTIME_ERROR_CODES.submitConflict,
      `Cannot submit execution "${executionId}": ${difference}. Nothing was written. ${fix}`,
    );
    this.executionId = executionId;
    this.field = field;
  }
}

/** An execution id that has no log in the app's stores. */
export class UnknownExecutionError extends LoomworkError {
  static override readonly name: string = "UnknownExecutionError";
  readonly executionId: string;
  constructor(executionId: string) {
    super(
      RUNTIME_ERROR_CODES.unknownExecution,
      `Execution "${executionId}" has no log in this app's stores. Check the id, or start it first.`,
    );
    this.executionId = executionId;
  }
}

/**
 * An execution of the runtime's own machines (a sweep, an erasure) met by an app that has not loaded
 * loomwork/lifecycle: no lifecycle function was called on it, so it holds neither those machines nor their
 * steps (docs/adr/0011-entry-points-by-role.md). The lifecycle function finishes it.
 */
export class LifecycleNotLoadedError extends LoomworkError {
  static override readonly name: string = "LifecycleNotLoadedError";
  readonly executionId: string;
  constructor(executionId: string) {
    const finish = executionId.startsWith("loom.erase:")
      ? "call eraseSubject(app, subject) from loomwork/lifecycle again for its subject: it finishes the erasure, and the subject is refused until then"
      : "call sweep(app, options) from loomwork/lifecycle: it resumes and finishes an unfinished sweep first";
    super(
      RUNTIME_ERROR_CODES.lifecycleNotLoaded,
      `Execution "${executionId}" is the runtime's own maintenance work, which this app has not loaded: ${finish}.`,
    );
    this.executionId = executionId;
  }
}

/** The execution ended in error; `result()` rejects with this, carrying the journaled error. */
export class ExecutionFailedError extends LoomworkError {
  static override readonly name: string = "ExecutionFailedError";
  readonly executionId: string;
  readonly error: SerializedError;
  constructor(executionId: string, error: SerializedError) {
    super(RUNTIME_ERROR_CODES.executionFailed, `Execution "${executionId}" failed: ${errorText(error)}`);
    this.executionId = executionId;
    this.error = error;
  }
}

/** The execution was stopped (`app.stop` or the kill switch); `result()` rejects with this. */
export class ExecutionStoppedError extends LoomworkError {
  static override readonly name: string = "ExecutionStoppedError";
  readonly executionId: string;
  constructor(executionId: string, reason: string) {
    super(RUNTIME_ERROR_CODES.executionStopped, `Execution "${executionId}" was stopped: ${reason}.`);
    this.executionId = executionId;
  }
}

/** An effect returned something that is not JSON (BigInt, a cycle, a function); nothing was journaled for it. */
export class NonJsonOutputError extends LoomworkError {
  static override readonly name: string = "NonJsonOutputError";
  readonly stepId: string;
  constructor(stepId: string, reason: string) {
    super(
      RUNTIME_ERROR_CODES.nonJsonOutput,
      `Step "${stepId}" returned a value that is not JSON (${reason}); return plain JSON data.`,
    );
    this.stepId = stepId;
  }
}

/**
 * A tree grew past `execution.children` (ADR 0012 D10): a child deeper than `maxDepth` (the child is not started; its
 * parent's step fails with this error), or a macrostep starting more child machines than `maxFanOut` (the execution
 * ends in error, as with any throw of its transition).
 */
export class ChildLimitError extends LoomworkError {
  static override readonly name: string = "ChildLimitError";
  readonly executionId: string;
  readonly limit: "maxDepth" | "maxFanOut";
  readonly value: number;
  readonly max: number;
  constructor(executionId: string, limit: "maxDepth" | "maxFanOut", value: number, max: number) {
    super(
      RUNTIME_ERROR_CODES.childLimit,
      limit === "maxDepth"
        ? `Child execution "${executionId}" would be ${value} levels deep, past execution.children.maxDepth (${max}): a tree this deep is usually a machine invoking itself; raise the limit if it is meant.`
        : `Execution "${executionId}" started ${value} child machines in one macrostep, past execution.children.maxFanOut (${max}); raise the limit if it is meant.`,
    );
    this.executionId = executionId;
    this.limit = limit;
    this.value = value;
    this.max = max;
  }
}

/**
 * A machine registered a `systemId` its tree already holds (ADR 0012 D4: one registry per tree, as XState's one
 * system): the macrostep that spawned it throws, so the execution ends in error (its parent's step fails with it).
 */
export class DuplicateSystemIdError extends LoomworkError {
  static override readonly name: string = "DuplicateSystemIdError";
  readonly executionId: string;
  readonly systemId: string;
  /** The execution that holds the systemId already. */
  readonly holder: string;
  constructor(executionId: string, systemId: string, holder: string) {
    super(
      RUNTIME_ERROR_CODES.duplicateSystemId,
      `Execution "${executionId}" registers systemId "${systemId}", which its tree already holds (in "${holder}"): a systemId names one actor per tree, as in XState's system. Give the actor another systemId, or look the existing one up with system.get.`,
    );
    this.executionId = executionId;
    this.systemId = systemId;
    this.holder = holder;
  }
}

/** The app was closed; no more work is accepted. */
export class AppClosedError extends LoomworkError {
  static override readonly name: string = "AppClosedError";
  constructor(what: string) {
    super(
      RUNTIME_ERROR_CODES.appClosed,
      `Cannot ${what}: the app is closed. Create a new app over the same stores to resume.`,
    );
  }
}

/**
 * A model provider's reply is not a ModelReply (`{ text?: string, toolCalls?: { toolName: string, input }[], usage? }`):
 * the model step fails with this (journaled as STEP_FAILED), naming the step and the field at fault.
 */
export class ModelReplyError extends LoomworkError {
  static override readonly name: string = "ModelReplyError";
  readonly stepId: string;
  /** The field at fault: `reply` (the whole reply), `text`, `toolCalls`, `toolCalls[1].toolName`, ... */
  readonly field: string;
  constructor(stepId: string, field: string, problem: string) {
    super(
      RUNTIME_ERROR_CODES.modelReply,
      `Model step "${stepId}": the reply's ${field} ${problem}. A model returns { text?: string, toolCalls?: { toolName: string, input }[], usage? }; ` +
        `fix the provider (or the script of scriptedModel).`,
    );
    this.stepId = stepId;
    this.field = field;
  }
}

/**
 * A journaled error: what STEP_FAILED and EXECUTION_ENDED records carry, and what machines receive. An Error's has
 * its name and message; a thrown plain object's is that object's JSON (as XState delivers it), which may have neither.
 */
export interface SerializedError {
  name?: string;
  message?: string;
  code?: string;
  [fact: string]: unknown;
}

/**
 * Turns any thrown value into the plain, JSON-safe form that is journaled and replayed: an Error as its name,
 * message, string code and own enumerable JSON fields; a plain object (a rejection with `{ code: 42 }`) as its
 * JSON fields, nothing added; anything else (a string, a number, an object JSON cannot hold) as an Error's name and
 * message holding its text.
 */
export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) {
    const out: SerializedError = { name: error.name, message: error.message };
    const code = "code" in error ? error.code : undefined;
    if (typeof code === "string") out.code = code;
    for (const [key, value] of Object.entries(error)) {
      if (key === "code" || key === "cause" || key === "stack" || key === "name" || key === "message") continue;
      const json = jsonCopy(value);
      if (json !== undefined) out[key] = json;
    }
    return out;
  }
  if (typeof error === "object" && error !== null && !Array.isArray(error)) {
    const json = jsonCopy(error);
    if (isRecord(json)) return json;
  }
  return { name: "Error", message: typeof error === "string" ? error : safeString(error) };
}

/** An error's "name: message", or its JSON where it has neither (a thrown plain object). */
export function errorText(error: SerializedError): string {
  if (error.name === undefined && error.message === undefined) return safeString(error);
  return `${error.name ?? "Error"}: ${error.message ?? ""}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// A value's JSON copy (what a journal keeps of it); undefined when JSON cannot hold it (a cycle, a BigInt, a function).
function jsonCopy(value: unknown): unknown {
  try {
    const text = JSON.stringify(value);
    if (text === undefined) return undefined;
    const parsed: unknown = JSON.parse(text);
    return parsed;
  } catch {
    return undefined;
  }
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Runs `check`, then `run`: a refused argument is a rejected promise, like every later refusal of the call (the call never throws). */
export function checked<T>(check: () => unknown, run: () => Promise<T>): Promise<T> {
  try {
    check();
  } catch (error) {
    return Promise.reject(error);
  }
  return run();
}

/** `app.deleteHistory` of an execution this app is running: stop it first. */
export class HistoryInUseError extends LoomworkError {
  static override readonly name: string = "HistoryInUseError";
  readonly executionId: string;
  constructor(executionId: string) {
    super(
      RUNTIME_ERROR_CODES.historyInUse,
      `Execution "${executionId}" is running in this app, so its history cannot be deleted under it. Call app.stop("${executionId}") first.`,
    );
    this.executionId = executionId;
  }
}
