// RecordAuthenticationError, apart from the sealing code that throws it (stores/recordSealing.ts): the
// package entry exports it from here, so code that only recognises the error does not import the sealing
// code.
import { STORE_ERROR_CODES } from "./constants.js";
import { LoomworkError } from "./errors.js";

/** A sealed record failed authentication: altered, moved from another position or execution, or sealed under another key. */
export class RecordAuthenticationError extends LoomworkError {
  static override readonly name: string = "RecordAuthenticationError";
  readonly executionId: string;
  readonly seq: number;
  constructor(executionId: string, seq: number, reason: string, options?: { cause?: unknown }) {
    super(
      STORE_ERROR_CODES.recordAuthentication,
      `Execution "${executionId}": sealed record at seq ${seq} failed authentication (${reason}). ` +
        `It was altered, moved from another seq or execution, or sealed under another subject's key; ` +
        `restore the log from a backup rather than replaying it.`,
      options,
    );
    this.executionId = executionId;
    this.seq = seq;
  }
}
