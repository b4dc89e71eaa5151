// The lifecycle's errors, apart from the code that throws them (erase.ts, sweep.ts, erasureStatus.ts and
// sealing), so the package's entry re-exports them without importing that code.
// HistoryInUseError, which app.deleteHistory throws at once, is in actors/errors.ts: only first-use code
// imports this module, so a bundler keeps it out of the start chunks.
import { LoomworkError, SubjectErasedError } from "../../stores/errors.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";

/** Why erasure refused: each names what to fix. */
export type ContentCopiesRemainReason =
  "not-wired" | "cannot-delete" | "no-conditional-delete" | "not-enumerable" | "unknown-citations";

const REASONS: Record<ContentCopiesRemainReason, string> = {
  "not-wired":
    "no content store is wired to erase them from. Pass { content }: the store execution.claimCheck writes to",
  "cannot-delete":
    "the content store cannot delete (no delete()). Use a store that can, e.g. the memory, fs or IndexedDB store",
  "no-conditional-delete":
    "the content store lacks deleteIfUntouchedSince or touchClock (ContentStore SPI 1.3.0), and erasure never deletes a blob another execution may have just re-put. Use a store that implements both",
  "not-enumerable":
    "the event store cannot list its executions, so no one can tell which blobs other executions still cite. Use a store whose listExecutions works",
  "unknown-citations":
    "a sealed record of the subject does not list the addresses it cites and cannot be opened. Restore its key or the record",
};

/**
 * Erasure refused BEFORE the shred: blobs of the subject would outlive its key (ADR 0140 D8, D12). Nothing
 * was destroyed; fix what the message names and erase again.
 */
export class ContentCopiesRemainError extends LoomworkError {
  static override readonly name: string = "ContentCopiesRemainError";
  readonly subject: string;
  /** How many blobs are at stake (-1 when the event store could not be enumerated to count them). */
  readonly blobs: number;
  readonly reason: ContentCopiesRemainReason;
  constructor(subject: string, blobs: number, reason: ContentCopiesRemainReason) {
    super(
      RUNTIME_ERROR_CODES.contentCopiesRemain,
      `Erasing subject "${subject}" refused before the shred: ${blobs >= 0 ? `${blobs} claim-checked blob(s)` : "its claim-checked blobs"} ` +
        `would stay readable after its key is destroyed, because ${REASONS[reason]}. Nothing was erased.`,
    );
    this.subject = subject;
    this.blobs = blobs;
    this.reason = reason;
  }
}

/** A subject's erasure started and has not finished: its executions may not start or resume meanwhile. */
export class ErasureInProgressError extends LoomworkError {
  static override readonly name: string = "ErasureInProgressError";
  readonly subject: string;
  readonly coordinatorId: string;
  constructor(subject: string, coordinatorId: string) {
    super(
      RUNTIME_ERROR_CODES.erasureInProgress,
      `Subject "${subject}" is being erased (${coordinatorId} has not finished), so its executions may not start or resume: ` +
        `whatever they wrote now would escape the erasure's plan. Run eraseSubject(app, "${subject}") (loomwork/lifecycle) again to finish it.`,
    );
    this.subject = subject;
    this.coordinatorId = coordinatorId;
  }
}

/** An execution's records are unreadable because its subject was erased (the key is destroyed): not garbage, erased. */
export class ExecutionErasedError extends SubjectErasedError {
  static override readonly name: string = "ExecutionErasedError";
  readonly executionId: string;
  constructor(executionId: string, subject: string) {
    super(subject);
    this.executionId = executionId;
    this.message =
      `Execution "${executionId}" holds data of subject "${subject}", which was erased: its records are crypto-shredded ` +
      `(the key is destroyed) and can no longer be read, resumed or exported. Nothing is wrong with the store.`;
  }
}

export { HistoryInUseError } from "../errors.js";
