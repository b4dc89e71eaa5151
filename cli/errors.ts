// Exit codes and the errors that carry them. Scripts branch on the code; the message says what to do.
import { LoomworkError } from "../stores/errors.js";

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

/** The `code` of the CLI's own refusals (a runtime or storage error keeps its own code). */
export const CLI_ERROR_CODES = {
  /** A `CliError` with no more specific code. */
  cli: "LOOM_CLI",
  /** `UsageError`: a bad command line. */
  usage: "LOOM_CLI_USAGE",
  /** `NotFoundError`: the directory, an execution, a subject or a story does not exist. */
  notFound: "LOOM_CLI_NOT_FOUND",
} as const;

/** A refusal the CLI explains itself: printed as `loomwork <command>: <message>`, then exits with `exitCode`. */
export class CliError extends LoomworkError {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    /** A second line: what to try next. */
    readonly hint?: string,
    code: string = CLI_ERROR_CODES.cli,
  ) {
    super(code, message);
  }
}

/** A bad command line (unknown command or option, missing or malformed argument): exit code 2. */
export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, EXIT.usage, hint, CLI_ERROR_CODES.usage);
  }
}

/** The journal directory, an execution, a subject or a story does not exist: exit code 3. */
export class NotFoundError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, EXIT.notFound, hint, CLI_ERROR_CODES.notFound);
  }
}
