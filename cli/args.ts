// Command specs, argv parsing (node:util parseArgs) and the help every command prints with --help.
import { parseArgs } from "node:util";
import { UsageError } from "./errors.js";

export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  /** Placeholder shown in help for a string option, e.g. "<dir>". */
  value?: string;
  description: string;
}

export interface CommandSpec {
  name: string;
  summary: string;
  /** Positional arguments; a trailing `...` in the name takes the rest. */
  args: { name: string; required: boolean; description: string }[];
  options: Record<string, OptionSpec>;
  /** Paragraphs after the options. */
  details?: string[];
  /**
   * The command writes the journal: it takes the writer lock. The others open it read-only, beside a running app.
   * A function decides from the parsed options (`erase --dry-run` writes nothing).
   */
  writes?: boolean | ((values: Parsed["values"]) => boolean);
  examples: string[];
}

/** Options every command takes. */
export const COMMON_OPTIONS: Record<string, OptionSpec> = {
  dir: {
    type: "string",
    value: "<dir>",
    description: "the journal directory (default: $LOOMWORK_DIR, else ./.loomwork)",
  },
  json: { type: "boolean", description: "print JSON on stdout for scripts (errors go to stderr as JSON)" },
  "no-color": { type: "boolean", description: "no colour even on a TTY (NO_COLOR=1 does the same)" },
  help: { type: "boolean", short: "h", description: "show this help" },
};

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export function parseCommand(spec: CommandSpec, argv: string[]): Parsed {
  const options = { ...COMMON_OPTIONS, ...spec.options };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options: Object.fromEntries(
        Object.entries(options).map(([name, o]) => [name, { type: o.type, ...(o.short ? { short: o.short } : {}) }]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const message =
      error instanceof Error ? error.message.replace(/\. To specify a positional argument.*$/s, "") : String(error);
    throw new UsageError(
      message.charAt(0).toLowerCase() + message.slice(1),
      `Run \`loomwork ${spec.name} --help\` for its options.`,
    );
  }
  const values = parsed.values as Parsed["values"];
  if (values.help) return { values, positionals: parsed.positionals };
  const required = spec.args.filter((a) => a.required);
  const variadic = spec.args.some((a) => a.name.endsWith("..."));
  if (parsed.positionals.length < required.length) {
    throw new UsageError(`missing ${required[parsed.positionals.length]!.name}`, `Usage: ${usageLine(spec)}`);
  }
  if (!variadic && parsed.positionals.length > spec.args.length) {
    throw new UsageError(`unexpected argument "${parsed.positionals[spec.args.length]}"`, `Usage: ${usageLine(spec)}`);
  }
  return { values, positionals: parsed.positionals };
}

export function usageLine(spec: CommandSpec): string {
  const args = spec.args.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(" ");
  return `loomwork ${spec.name}${args ? ` ${args}` : ""} [options]`;
}

export function helpText(spec: CommandSpec): string {
  const lines = [`${spec.summary}`, "", `Usage: ${usageLine(spec)}`];
  if (spec.args.length) {
    lines.push("", "Arguments:");
    for (const a of spec.args) lines.push(`  ${a.name.padEnd(22)} ${a.description}`);
  }
  lines.push("", "Options:");
  for (const [name, o] of Object.entries({ ...spec.options, ...COMMON_OPTIONS })) {
    const flag = `${o.short ? `-${o.short}, ` : ""}--${name}${o.value ? ` ${o.value}` : ""}`;
    lines.push(`  ${flag.padEnd(22)} ${o.description}`);
  }
  for (const paragraph of spec.details ?? []) lines.push("", paragraph);
  lines.push("", "Examples:", ...spec.examples.map((e) => `  ${e}`));
  lines.push(
    "",
    "Exit codes: 0 ok, 1 runtime failure, 2 usage error, 3 not found, 4 corrupt journal, 5 journal locked.",
  );
  return lines.join("\n");
}
