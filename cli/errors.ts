// Exit codes and the errors that carry them. Scripts branch on the code; the message says what to do.

/** The documented exit codes of every command (docs/cli.md). */
export const EXIT = {
  ok: 0,
  /** Something failed at run time (a story failed, a replay diverged, an inspector was unreachable). */
  failure: 1,
  /** Bad command line: unknown command or option, missing argument. */
  usage: 2,
  /** The journal directory, an execution, a subject or a story does not exist. */
  notFound: 3,
  /** A journal file is damaged in the middle (a torn tail is repaired on open, never reported). */
  corrupt: 4,
  /** Another process holds the journal directory's writer lock. */
  locked: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A refusal the CLI explains itself: printed as `loomwork <command>: <message>`, then exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    /** A second line: what to try next. */
    readonly hint?: string,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, EXIT.usage, hint);
    this.name = "UsageError";
  }
}

export class NotFoundError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, EXIT.notFound, hint);
    this.name = "NotFoundError";
  }
}
