// Storage errors. Each carries the facts as fields and says what to do in its message.

/** Base class of every loomwork error; `code` is stable and safe to branch on. */
export class LoomworkError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A second writer appended at a stale seq. The log is unchanged; reload the head and retry, or stop. */
export class ConcurrencyError extends LoomworkError {
  readonly executionId: string;
  readonly expected: number;
  readonly actual: number;
  constructor(executionId: string, expected: number, actual: number) {
    super(
      "LOOM_CONCURRENCY",
      `Execution "${executionId}": append expected head seq ${expected} but the log is at seq ${actual}. ` +
        `Another writer appended first; the log was not changed. Resume the execution in one app only.`,
    );
    this.executionId = executionId;
    this.expected = expected;
    this.actual = actual;
  }
}

/** A record in the middle of a journal fails its checksum or framing. Never silently dropped. */
export class JournalCorruptionError extends LoomworkError {
  readonly file: string;
  readonly offset: number;
  constructor(file: string, offset: number, reason: string) {
    super(
      "LOOM_JOURNAL_CORRUPT",
      `Journal ${file} is corrupt at byte offset ${offset}: ${reason}. ` +
        `Only a torn tail is repaired automatically; restore this file from a backup.`,
    );
    this.file = file;
    this.offset = offset;
  }
}

/** The storage quota was exhausted; nothing of the failed write was kept. */
export class StorageQuotaError extends LoomworkError {
  constructor(what: string, options?: { cause?: unknown }) {
    super("LOOM_STORAGE_QUOTA", `Storage quota exceeded while ${what}; nothing was written. Free space and retry.`, options);
  }
}

/** Another process or tab holds the writer lock. */
export class WriterLockedError extends LoomworkError {
  readonly resource: string;
  constructor(resource: string, options?: { cause?: unknown }) {
    super(
      "LOOM_WRITER_LOCKED",
      `${resource} is locked by another writer (process or tab). Close it, or open the journal read-only.`,
      options,
    );
    this.resource = resource;
  }
}

/** A write failed in a way that leaves the writer unusable (e.g. fsync EIO). Reopen the stores to recover. */
export class WriterFailedError extends LoomworkError {
  constructor(resource: string, options?: { cause?: unknown }) {
    super(
      "LOOM_WRITER_FAILED",
      `The writer for ${resource} failed and refuses further writes; reopen the stores to recover what was durable.`,
      options,
    );
  }
}

/** The subject's key was destroyed (erased); no new data can be sealed or read for it. */
export class SubjectErasedError extends LoomworkError {
  readonly subject: string;
  constructor(subject: string) {
    super("LOOM_SUBJECT_ERASED", `Subject "${subject}" was erased: its key is destroyed and its data cannot be read or written.`);
    this.subject = subject;
  }
}
