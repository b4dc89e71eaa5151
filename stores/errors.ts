// Storage errors. Each carries the facts as fields and says what to do in its message; each takes its
// `code` from STORE_ERROR_CODES (stores/constants.ts).
import { STORE_ERROR_CODES } from "./constants.js";

// Marks loomwork's error prototypes. `Symbol.for`, so an error from another copy of the package (or
// another realm) is recognised too.
const LOOMWORK_ERROR: unique symbol = Symbol.for("loomwork.error");

/**
 * Base class of every loomwork error; `code` is stable and safe to branch on (`ERROR_CODES`).
 * `error instanceof LoomworkError` is also true for the errors that extend `TypeError` so that
 * `instanceof TypeError` keeps working (`LoomworkTypeError`: `ConfigError`, `AiSdkReplyError`).
 */
export class LoomworkError extends Error {
  /**
   * The class's name, declared as a string so it survives a minifier (which renames classes): every error
   * class declares its own the same way, and an error's `name` is its class's (spec/errors.test.ts checks both).
   */
  static override readonly name: string = "LoomworkError";
  /** Stable and safe to branch on: one of `ERROR_CODES` for loomwork's own errors. */
  declare readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    nameAndCode(this, new.target.name, code);
  }

  // Only `LoomworkError` itself answers by the mark; its subclasses keep the ordinary prototype check.
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== LoomworkError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return (
      typeof value === "object" && value !== null && (value as { [LOOMWORK_ERROR]?: unknown })[LOOMWORK_ERROR] === true
    );
  }
}

/**
 * Base class of the loomwork errors that are `TypeError`s (a bad argument or option): `instanceof TypeError`
 * and `instanceof LoomworkError` both hold, and `code` is stable like every loomwork error's.
 */
export class LoomworkTypeError extends TypeError {
  static override readonly name: string = "LoomworkTypeError";
  declare readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    nameAndCode(this, new.target.name, code);
  }
}

// The constructor body both bases share: the code, then the class's declared name (`static name`, see
// LoomworkError.name; own, enumerable, in that order).
function nameAndCode(error: Error & { code: string }, name: string, code: string): void {
  error.code = code;
  error.name = name;
}

for (const base of [LoomworkError, LoomworkTypeError]) {
  Object.defineProperty(base.prototype, LOOMWORK_ERROR, { value: true });
}

/** A second writer appended at a stale seq. The log is unchanged; reload the head and retry, or stop. */
export class ConcurrencyError extends LoomworkError {
  static override readonly name: string = "ConcurrencyError";
  readonly executionId: string;
  readonly expected: number;
  readonly actual: number;
  constructor(executionId: string, expected: number, actual: number) {
    super(
      STORE_ERROR_CODES.concurrency,
      `Execution "${executionId}": append expected head seq ${expected} but the log is at seq ${actual}. ` +
        `Another writer appended first; the log was not changed. Resume the execution in one app only.`,
    );
    this.executionId = executionId;
    this.expected = expected;
    this.actual = actual;
  }
}

/**
 * What kind of damage a `JournalCorruptionError` reports:
 * - `frame`: a frame fails its checksum or framing (or does not continue the log) before the last durable size.
 * - `missing`: the log file is gone or unreadable from its first byte, while a snapshot, archive segments
 *   or the catalogue checkpoint prove records were acknowledged.
 * - `cut`: the file ends before the size the store had recorded as durable: acknowledged bytes are gone.
 * - `behind-snapshot`: the log ends at a seq below its snapshot's: it lost records the snapshot had seen.
 * - `snapshot`: the snapshot file fails its checksum. A snapshot is a cache: the runtime replays the log
 *   instead (warning `LOOM_SNAPSHOT_DAMAGED`) and fails only when the log does not cover the history.
 */
export type JournalDamageKind = "frame" | "missing" | "cut" | "behind-snapshot" | "snapshot";

/** What is still whole beside a damaged journal (an execution's other files). */
export interface JournalSurvivors {
  /** Seq of the execution's snapshot, when one is whole. */
  snapshotSeq?: number;
  /** Seq ranges of the whole archive segments. */
  archives?: { fromSeq: number; toSeq: number }[];
  /** Last seq the log still holds whole (0 when none). */
  logHead?: number;
}

/** Facts of a `JournalCorruptionError` beyond the file and offset. */
export interface JournalCorruptionDetails {
  /** @defaultValue "frame" */
  kind?: JournalDamageKind;
  survives?: JournalSurvivors;
  /** What to do; replaces the default advice (restore the file from a backup). */
  remedy?: string;
}

function survivorsText(s: JournalSurvivors | undefined): string {
  if (!s) return "";
  const parts = [
    s.logHead === undefined
      ? undefined
      : s.logHead > 0
        ? `the log holds seqs through ${s.logHead}`
        : "the log holds no record",
    s.snapshotSeq === undefined ? "no whole snapshot" : `a whole snapshot at seq ${s.snapshotSeq}`,
    s.archives?.length
      ? `archive segments ${s.archives.map((a) => `${a.fromSeq}-${a.toSeq}`).join(", ")}`
      : "no archive segment",
  ].filter((p) => p !== undefined);
  return ` What survives: ${parts.join("; ")}.`;
}

/**
 * A journal file is damaged where bytes were acknowledged as durable: a bad frame, a missing or cut log,
 * a log behind its snapshot. Never silently dropped or truncated: every open reports it again.
 */
export class JournalCorruptionError extends LoomworkError {
  static override readonly name: string = "JournalCorruptionError";
  readonly file: string;
  readonly offset: number;
  readonly kind: JournalDamageKind;
  /** What is wrong there, without the advice (e.g. "checksum mismatch"). */
  readonly reason: string;
  /** What is still whole (set when the store looked). */
  readonly survives?: JournalSurvivors;
  constructor(file: string, offset: number, reason: string, details: JournalCorruptionDetails = {}) {
    super(
      STORE_ERROR_CODES.journalCorrupt,
      `Journal ${file} is corrupt at byte offset ${offset}: ${reason}.${survivorsText(details.survives)} ` +
        (details.remedy ??
          `Only a torn tail is repaired automatically; restore this file from a backup (docs/storage.md, "Recovery").`),
    );
    this.file = file;
    this.offset = offset;
    this.kind = details.kind ?? "frame";
    this.reason = reason;
    if (details.survives) this.survives = details.survives;
  }
}

/** The storage quota was exhausted; nothing of the failed write was kept. */
export class StorageQuotaError extends LoomworkError {
  static override readonly name: string = "StorageQuotaError";
  constructor(what: string, options?: { cause?: unknown }) {
    super(
      STORE_ERROR_CODES.storageQuota,
      `Storage quota exceeded while ${what}; nothing was written. Free space and retry.`,
      options,
    );
  }
}

/** Another process or tab holds the writer lock. */
export class WriterLockedError extends LoomworkError {
  static override readonly name: string = "WriterLockedError";
  readonly resource: string;
  constructor(resource: string, options?: { cause?: unknown }) {
    super(
      STORE_ERROR_CODES.writerLocked,
      `${resource} is locked by another writer (process or tab). Close it, or open the journal read-only.`,
      options,
    );
    this.resource = resource;
  }
}

/**
 * An execution id or subject that is not a well-formed string: not a string, or one holding a lone
 * surrogate, which has no UTF-8 form (PostgreSQL would store it as U+FFFD, making two ids one). Refused
 * by every store before anything is read or written. A `TypeError` (and a `LoomworkError`).
 */
export class MalformedIdError extends LoomworkTypeError {
  static override readonly name: string = "MalformedIdError";
  /** What the value names: an execution, a subject or a schedule. */
  readonly what: "execution id" | "subject" | "schedule id";
  /** The value refused. */
  readonly value: unknown;
  constructor(what: "execution id" | "subject" | "schedule id", value: unknown) {
    const index = typeof value === "string" ? value.search(/\p{Surrogate}/u) : -1;
    const problem =
      typeof value !== "string"
        ? `is ${value === null ? "null" : typeof value}, not a string`
        : `${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)} holds a lone surrogate (U+${value.charCodeAt(index).toString(16).toUpperCase()} at index ${index}), which has no UTF-8 form and would be stored as U+FFFD`;
    super(
      STORE_ERROR_CODES.malformedId,
      `The ${what} ${problem}. ${what === "subject" ? "A subject" : what === "schedule id" ? "A schedule id" : "An execution id"} must be a well-formed string; ` +
        `build it from text (an id of bytes as hex or base64url), or repair it with String.prototype.toWellFormed() before its first use.`,
    );
    this.what = what;
    this.value = value;
  }
}

/** A write to stores opened read-only (`fsStores({ dir, readOnly: true })`): they read, and never write. */
export class ReadOnlyStoreError extends LoomworkError {
  static override readonly name: string = "ReadOnlyStoreError";
  readonly resource: string;
  constructor(resource: string) {
    super(
      STORE_ERROR_CODES.readOnly,
      `${resource} was opened read-only: it reads the journal and writes nothing. Open it without readOnly (as its only writer) to write.`,
    );
    this.resource = resource;
  }
}

/** A write failed in a way that leaves the writer unusable (e.g. fsync EIO). Reopen the stores to recover. */
export class WriterFailedError extends LoomworkError {
  static override readonly name: string = "WriterFailedError";
  constructor(resource: string, options?: { cause?: unknown }) {
    super(
      STORE_ERROR_CODES.writerFailed,
      `The writer for ${resource} failed and refuses further writes; reopen the stores to recover what was durable.`,
      options,
    );
  }
}

/** The subject's key was destroyed (erased); no new data can be sealed or read for it. */
export class SubjectErasedError extends LoomworkError {
  static override readonly name: string = "SubjectErasedError";
  readonly subject: string;
  constructor(subject: string) {
    super(
      STORE_ERROR_CODES.subjectErased,
      `Subject "${subject}" was erased: its key is destroyed and its data cannot be read or written.`,
    );
    this.subject = subject;
  }
}

/** Where `KeyMissingError` found the key gone, and what it was reading. */
export interface KeyMissingDetails {
  /** Where the key should be: the fs key file, or the IndexedDB database, object store and key. */
  location?: string;
  /** The execution whose sealed records needed the key. */
  executionId?: string;
}

/**
 * A subject's key is gone although it was created (data may be sealed under it) and the subject was never
 * erased: a deleted key file, a lost key row. No fresh key is ever made in its place (that would hide the
 * loss behind a key that opens nothing); starts and reads for the subject are refused until it is restored.
 */
export class KeyMissingError extends LoomworkError {
  static override readonly name: string = "KeyMissingError";
  readonly subject: string;
  /** Where the key should be (the fs key file; the IndexedDB database and row), when the store knows. */
  readonly location: string | undefined;
  readonly executionId: string | undefined;
  constructor(subject: string, details: KeyMissingDetails = {}) {
    const where = details.location ? ` (${details.location})` : "";
    const reading = details.executionId
      ? ` Execution "${details.executionId}" is sealed under it and cannot be read.`
      : "";
    super(
      STORE_ERROR_CODES.keyMissing,
      `The key of subject "${subject}" is missing${where}, although it was created and the subject was never erased: ` +
        `its sealed data cannot be read, and no fresh key is made in its place.${reading} ` +
        `Restore ${details.location ?? "the key"} from a backup of the journal; if the key is lost for good, ` +
        `erase the subject (eraseSubject(app, "${subject}"), loomwork/lifecycle): what was sealed under it is unrecoverable either way.`,
    );
    this.subject = subject;
    this.location = details.location;
    this.executionId = details.executionId;
  }
}

/**
 * WebCrypto (`crypto.subtle`) is missing, which loomwork hashes and seals with: browsers offer it only in a
 * secure context (https, or http on localhost / 127.0.0.1), so a page served over plain http from a LAN name
 * or an IP address has none. Refused when the stores open and at `createApp`, before any run.
 */
export class InsecureContextError extends LoomworkError {
  static override readonly name: string = "InsecureContextError";
  /** The call that refused: `"indexedDbStores"`, `"createApp"`, or the operation that needed WebCrypto. */
  readonly where: string;
  /** The page's origin, when there is a page (`location.origin`). */
  readonly origin: string | undefined;
  constructor(where: string, context: { secure: boolean | undefined; origin: string | undefined }) {
    const at = context.origin ? ` (this page: ${context.origin})` : "";
    super(
      STORE_ERROR_CODES.insecureContext,
      context.secure === false
        ? `${where}: loomwork needs a secure context (https or localhost) for WebCrypto (crypto.subtle), and this page is not one${at}. ` +
            `Browsers offer WebCrypto only to secure contexts: serve the page over https, or open it on localhost / 127.0.0.1; ` +
            `for a development machine on the LAN, list its origin in chrome://flags/#unsafely-treat-insecure-origin-as-secure.`
        : `${where}: WebCrypto (globalThis.crypto.subtle) is missing${at}; loomwork hashes and seals with it. ` +
            `Run on Node 20 or later, or in a browser with WebCrypto, in a secure context (https or localhost).`,
    );
    this.where = where;
    this.origin = context.origin;
  }
}
