// Execution ids and subjects name what the stores keep (a log, a file, a row, a key): each must be a
// well-formed string. A lone surrogate has no UTF-8 form: PostgreSQL's text (and any UTF-8 encoder)
// stores it as U+FFFD, so "a\uD800" and "a\uFFFD" would be one execution there. Every store refuses
// such an id at every call that names one, reading or writing, so that no store aliases two of them.
import { MalformedIdError } from "./errors.js";
import { EXECUTION_STARTED } from "./schema.js";
import type { StoredRecord } from "./types.js";

// With the u flag, a surrogate pair is one code point and does not match: only a lone surrogate does.
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Throws `MalformedIdError` unless `value` is a string with no lone surrogate (well-formed UTF-16). */
export function checkStoredId(
  value: unknown,
  what: "execution id" | "subject" | "schedule id",
): asserts value is string {
  if (typeof value !== "string" || LONE_SURROGATE.test(value)) throw new MalformedIdError(what, value);
}

/** The ids an append names: its execution's, and the subject its start record gives the catalogue. */
export function checkAppendIds(executionId: string, records: readonly StoredRecord[]): void {
  checkStoredId(executionId, "execution id");
  for (const record of records)
    if (record.type === EXECUTION_STARTED && record.subject !== undefined) checkStoredId(record.subject, "subject");
}
