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
  /** `follow` ended by Ctrl-C (SIGINT) before the execution ended, as a shell reports a process it interrupted. */
  interrupted: 130,
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
  /** `ExecutionEndedError`: send, approve, deny, stop or resume on an execution that already ended. */
  ended: "LOOM_CLI_ENDED",
  /** `AppUnreachableError`: an app holds the writer lock and serves no control socket. */
  appUnreachable: "LOOM_CLI_APP_UNREACHABLE",
  /** `NoAppError`: resume needs an app (its effects), and none holds the journal. */
  noApp: "LOOM_CLI_NO_APP",
} as const;

/** A refusal the CLI explains itself: printed as `loomwork <command>: <message>`, then exits with `exitCode`. */
export class CliError extends LoomworkError {
  static override readonly name: string = "CliError";
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
  static override readonly name: string = "UsageError";
  constructor(message: string, hint?: string) {
    super(message, EXIT.usage, hint, CLI_ERROR_CODES.usage);
  }
}

/** The journal directory, an execution, a subject or a story does not exist: exit code 3. */
export class NotFoundError extends CliError {
  static override readonly name: string = "NotFoundError";
  constructor(message: string, hint?: string) {
    super(message, EXIT.notFound, hint, CLI_ERROR_CODES.notFound);
  }
}

/** The execution already ended (done, error or stopped): nothing can be sent to it, stopped or resumed. Exit code 1. */
export class ExecutionEndedError extends CliError {
  static override readonly name: string = "ExecutionEndedError";
  constructor(
    readonly executionId: string,
    readonly status: string,
  ) {
    super(
      `execution "${executionId}" already ended (${status})`,
      EXIT.failure,
      "Only a running execution takes events, decisions, stop and resume; `loomwork log` shows how it ended.",
      CLI_ERROR_CODES.ended,
    );
  }
}

/** An app holds the journal's writer lock and serves no control socket: the CLI cannot reach it, and may not write beside it. Exit code 5. */
export class AppUnreachableError extends CliError {
  static override readonly name: string = "AppUnreachableError";
  constructor(dir: string, holder: string) {
    super(
      `the journal ${dir} is held by a running app${holder}, which serves no control socket`,
      EXIT.locked,
      'Have the app serve one: import { serveControl } from "loomwork/fs"; await serveControl(app, { dir: stores.dir }) (docs/cli.md, "Operating a running app"), or quit the app and run this again with --logic.',
      CLI_ERROR_CODES.appUnreachable,
    );
  }
}

/** `resume` runs the execution's effects, which only an app has; no app holds the journal. Exit code 1. */
export class NoAppError extends CliError {
  static override readonly name: string = "NoAppError";
  constructor(executionId: string) {
    super(
      `no app holds the journal, and resuming "${executionId}" runs its effects (models, tools), which only an app has`,
      EXIT.failure,
      `Start the app that owns the journal: it resumes "${executionId}" with app.resume or app.resumeUnfinished(); with serveControl, \`loomwork resume\` then goes through it.`,
      CLI_ERROR_CODES.noApp,
    );
  }
}
