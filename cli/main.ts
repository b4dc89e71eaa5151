#!/usr/bin/env node
// loomwork: the command line over a filesystem journal directory (fsStores).
//
//   loomwork <command> [arguments] [--dir <dir>] [--json] [--no-color] [--help]
//
// Exit codes: 0 ok, 1 runtime failure, 2 usage error, 3 not found, 4 corrupt journal, 5 journal locked, 130 interrupted.
import { createRequire } from "node:module";
import { ERROR_CODES } from "../actors/constants.js";
import { JournalCorruptionError, LoomworkError, WriterLockedError } from "../stores/errors.js";
import { helpText, parseCommand } from "./args.js";
import { approvals } from "./commands/approvals.js";
import { devtools } from "./commands/devtools.js";
import { inspect } from "./commands/inspect.js";
import { follow } from "./commands/follow.js";
import { log } from "./commands/log.js";
import { queues } from "./commands/queues.js";
import { ls } from "./commands/ls.js";
import { erase, exportSubject, sweep } from "./commands/maintenance.js";
import { approve, deny, resume, send, stop } from "./commands/operate.js";
import { helpCommands, run } from "./commands/run.js";
import { stats } from "./commands/stats.js";
import { replayCheck } from "./commands/replayCheck.js";
import { schedules } from "./commands/schedules.js";
import { createContext, type Command } from "./context.js";
import { CliError, EXIT, UsageError, type ExitCode } from "./errors.js";
import { jsonText, palette, printable } from "./terminal.js";

const COMMANDS: Record<string, Command> = {
  run,
  ls,
  log,
  follow,
  stats,
  approvals,
  inspect,
  devtools,
  "replay-check": replayCheck,
  send,
  approve,
  deny,
  stop,
  resume,
  sweep,
  erase,
  export: exportSubject,
  queues,
  schedules,
};

// The installed package's version (the package resolves itself by name, in a checkout and when installed).
function version(): string {
  const manifest: unknown = createRequire(import.meta.url)("loomwork/package.json");
  return typeof manifest === "object" && manifest !== null && "version" in manifest
    ? String(manifest.version)
    : "unknown";
}

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  return [
    "loomwork: inspect and maintain a loomwork journal directory (the one an app opens with fsStores({ dir })).",
    "",
    "Usage: loomwork <command> [arguments] [options]",
    "",
    "Commands:",
    ...helpCommands(Object.values(COMMANDS)).map(({ spec }) => `  ${spec.name.padEnd(width)}  ${spec.summary}`),
    "",
    "Every command takes --dir <dir> (default: $LOOMWORK_DIR, else ./.loomwork), --json, --no-color and --help.",
    "loomwork --version prints the installed version.",
    "ls, log, follow, stats, inspect, devtools, export and erase --dry-run open the journal read-only, so they work while an app writes it;",
    "sweep and erase take the directory's writer lock, so they cannot run while an app has it open. send, approve, deny, stop and",
    "resume go through the app that holds the journal (its control socket, serveControl), else journal the command with --logic.",
    "",
    "Exit codes: 0 ok, 1 runtime failure, 2 usage error, 3 not found, 4 corrupt journal, 5 journal locked.",
    "(5 also when an app holds the journal and serves no control socket; follow exits 130 on Ctrl-C.)",
    "Run `loomwork <command> --help` for a command's arguments, options and examples.",
  ].join("\n");
}

interface Failure {
  exitCode: ExitCode;
  code?: string;
  message: string;
  hint?: string;
}

/** Maps what a command threw to its exit code and a message that says what to do. */
function failureOf(error: unknown, dir: string): Failure {
  if (error instanceof CliError)
    return {
      exitCode: error.exitCode,
      code: error.code,
      message: error.message,
      ...(error.hint ? { hint: error.hint } : {}),
    };
  if (error instanceof WriterLockedError) {
    const holder =
      error.cause instanceof Error ? /held by pid (\d+) on ([^ ]+) since ([^;]+)/.exec(error.cause.message) : null;
    return {
      exitCode: EXIT.locked,
      code: error.code,
      message: `the journal ${dir} is locked by another process${holder ? ` (pid ${holder[1]} on ${holder[2]}, since ${holder[3]})` : ""}`,
      hint: "sweep and erase take the directory's writer lock, so they cannot run while an app has the journal open. Close that app's stores (app quit) and run it again; ls, log, stats, inspect, export and erase --dry-run work beside it.",
    };
  }
  if (error instanceof JournalCorruptionError) {
    return {
      exitCode: EXIT.corrupt,
      code: error.code,
      message: `corrupt journal: ${error.file} is damaged at byte offset ${error.offset} (${error.message.replace(/^.*?: /, "").replace(/\. Only a torn tail.*$/, "")})`,
      hint: "Nothing was changed: only bytes past the last durable size are ever cut. Restore that file from a backup, or see the ways out for each kind of damage in docs/storage.md (Recovery); `loomwork ls --status damaged` lists every damaged execution.",
    };
  }
  if (error instanceof LoomworkError && error.code === ERROR_CODES.unknownExecution)
    return { exitCode: EXIT.notFound, code: error.code, message: error.message };
  if (error instanceof LoomworkError) return { exitCode: EXIT.failure, code: error.code, message: error.message };
  return {
    exitCode: EXIT.failure,
    message: error instanceof Error ? error.message : String(error),
    hint: "Set LOOMWORK_DEBUG=1 for the stack trace.",
  };
}

/** Runs the CLI on `argv` (without node and the script) and resolves with the exit code. */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const err = palette(process.stderr, argv.includes("--no-color"));
  if (name === undefined) {
    process.stderr.write(`${overview()}\n`);
    return EXIT.usage;
  }
  if (name === "--version" || name === "-v") {
    process.stdout.write(`${version()}\n`);
    return EXIT.ok;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    const topic = name === "help" ? rest[0] : undefined;
    if (topic && COMMANDS[topic]) process.stdout.write(`${helpText(COMMANDS[topic].spec)}\n`);
    else process.stdout.write(`${overview()}\n`);
    return EXIT.ok;
  }
  const command = COMMANDS[name];
  const json = argv.includes("--json");
  const report = (failure: Failure, commandName?: string) => {
    // A message may quote the journal (an id, a "did you mean" list): printed as data, like every journal value.
    if (json) process.stderr.write(`${jsonText({ error: failure })}\n`);
    else {
      process.stderr.write(
        `${err.red(`loomwork${commandName ? ` ${commandName}` : ""}: ${printable(failure.message)}`)}\n`,
      );
      if (failure.hint) process.stderr.write(`${err.dim(printable(failure.hint))}\n`);
    }
    return failure.exitCode;
  };
  if (!command && name.startsWith("-")) {
    return report(
      failureOf(
        new UsageError(
          `expected a command before ${name}`,
          "Usage: loomwork <command> [arguments] [options]; `loomwork --help` lists the commands.",
        ),
        "",
      ),
    );
  }
  if (!command) {
    const near = Object.keys(COMMANDS).find((n) => n.startsWith(name.slice(0, 2)));
    return report(
      failureOf(
        new UsageError(
          `unknown command "${name}"`,
          `${near ? `Did you mean \`loomwork ${near}\`? ` : ""}Run \`loomwork --help\` for the commands.`,
        ),
        "",
      ),
    );
  }
  let ctx: ReturnType<typeof createContext> | undefined;
  try {
    const parsed = parseCommand(command.spec, rest);
    if (parsed.values.help) {
      process.stdout.write(`${helpText(command.spec)}\n`);
      return EXIT.ok;
    }
    ctx = createContext(command.spec, parsed);
    return (await command.run(ctx)) ?? EXIT.ok;
  } catch (error) {
    if (process.env.LOOMWORK_DEBUG) console.error(error);
    return report(failureOf(error, ctx?.dir ?? ""), name);
  } finally {
    await ctx?.close().catch(() => undefined);
  }
}

process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
});

// Exits explicitly: an inspector socket retrying in the background must not keep the process alive.
const code = await main(process.argv.slice(2));
await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
process.exit(code);
