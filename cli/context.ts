// What a command gets: its parsed arguments, output helpers and the journal, opened on first use.
import { resolve } from "node:path";
import type { FsStores } from "../adapters/fs/index.js";
import type { CommandSpec, Parsed } from "./args.js";
import type { ExitCode } from "./errors.js";
import { openJournal } from "./journal.js";
import { jsonText, palette, terminalLine, type Palette } from "./terminal.js";

export interface Context {
  spec: CommandSpec;
  values: Parsed["values"];
  positionals: string[];
  /** The journal directory, absolute. */
  dir: string;
  json: boolean;
  /** Colours for stdout and for stderr (each on only where that stream is a TTY). */
  c: Palette;
  e: Palette;
  out(line?: string): void;
  err(line?: string): void;
  printJson(value: unknown): void;
  /** Opens the journal: read-only, or with the writer lock for a command that `writes`; main closes it when the command ends. */
  journal(): Promise<FsStores>;
}

export interface Command {
  spec: CommandSpec;
  run(ctx: Context): Promise<ExitCode | void>;
}

/** What a command declares beside its name and summary; `args` maps `<name>` (required) or `[name]` (optional; `name...` takes the rest) to its description. */
export interface CommandDeclaration
  extends Partial<Pick<CommandSpec, "options">>, Pick<CommandSpec, "details" | "examples" | "writes"> {
  args?: Record<string, string>;
}

/** Declares a command: its spec (for parsing and --help) and what it runs. */
export function command(name: string, summary: string, declared: CommandDeclaration, run: Command["run"]): Command {
  const args = Object.entries(declared.args ?? {}).map(([usage, description]) => ({
    name: usage.slice(1, -1),
    required: usage.startsWith("<"),
    description,
  }));
  const spec: CommandSpec = { name, summary, args, options: declared.options ?? {}, examples: declared.examples };
  if (declared.details) spec.details = declared.details;
  if (declared.writes) spec.writes = declared.writes;
  return { spec, run };
}

function writes(spec: CommandSpec, values: Parsed["values"]): boolean {
  return typeof spec.writes === "function" ? spec.writes(values) : spec.writes === true;
}

export function createContext(spec: CommandSpec, parsed: Parsed): Context & { close(): Promise<void> } {
  const noColor = parsed.values["no-color"] === true;
  const dir = resolve(String(parsed.values.dir ?? (process.env.LOOMWORK_DIR || ".loomwork")));
  let opened: Promise<FsStores> | undefined;
  const c = palette(process.stdout, noColor);
  const e = palette(process.stderr, noColor);
  return {
    spec,
    values: parsed.values,
    positionals: parsed.positionals,
    dir,
    json: parsed.values.json === true,
    c,
    e,
    // A closed pipe (`loomwork log x | head`) ends the output, not the command: the lock is still released.
    // Every line is put through terminalLine: journal content never reaches the terminal as control characters.
    out: (line = "") => void (process.stdout.destroyed || process.stdout.write(`${terminalLine(line, c.on)}\n`)),
    err: (line = "") => void process.stderr.write(`${terminalLine(line, e.on)}\n`),
    printJson: (value) => void (process.stdout.destroyed || process.stdout.write(`${jsonText(value, 2)}\n`)),
    journal: () => (opened ??= openJournal(dir, { readOnly: !writes(spec, parsed.values) })),
    async close() {
      const stores = await opened?.catch(() => undefined);
      await stores?.close();
    },
  };
}
