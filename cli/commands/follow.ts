// loomwork follow <executionId>: the execution's records as they are journaled, and its model's live
// deltas when the app that runs it serves its control socket; until the execution ends or Ctrl-C. With --postgres:
// the stream of an execution a fleet worker runs (app.stream on the fleet's schema, ADR 0019).
import { watch, type FSWatcher } from "node:fs";
import { ExecutionPaths } from "../../adapters/fs/journalFiles.js";
import type { StreamPart } from "../../actors/agents/deltas.js";
import { EXECUTION_ENDED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import { command, type Context } from "../context.js";
import { connectControl, type ControlClient } from "../control.js";
import { CliError, EXIT, NotFoundError, type ExitCode } from "../errors.js";
import { readStoredRecords, requireExecution } from "../journal.js";
import { postgresOptions, postgresTarget, type PostgresTarget } from "../postgres.js";
import { RecordExpander } from "../../stores/recordFormat.js";
import { valueText } from "../render.js";
import { LogTail } from "../tail.js";
import { gap, jsonText, padEndTo, printable, terminalLine, timestamp, type Palette } from "../terminal.js";
import { isInput, line } from "./log.js";

/** How often the log is looked at when no file event came (fs.watch misses some, on some file systems). */
const POLL_MS = 250;
const SHOWN_DELTAS = new Set(["text-delta", "reasoning-delta"]);
/** Where a line's text starts: after the seq (5), two spaces, the time (10) and a space, as `loomwork log` prints. */
const INDENT = 18;

export const follow = command(
  "follow",
  "Follow an execution live: its records as they are journaled, and its model's deltas as they stream.",
  {
    args: { "<executionId>": "the execution to follow" },
    options: {
      full: { type: "boolean", description: "print values whole instead of cut to the terminal's width" },
      ...postgresOptions(
        "follow an execution a PostgreSQL fleet's worker runs (a connection string) instead of a journal's",
      ),
    },
    details: [
      "Prints the timeline so far (as `loomwork log` does), then each record as it is appended, until the execution ends or Ctrl-C. " +
        "Read-only: it takes no lock, so it works beside the app that writes the journal; the log file is watched (fs.watch, and a " +
        `look every ${POLL_MS} ms).`,
      "Model deltas are never journaled: they are shown when the app serves its control socket (serveControl from loomwork/fs); " +
        "without one, only the records are shown, each as it is appended.",
      "A lead's sub-agents (agentTool) stream with it: their deltas are shown under `⋯ <agent> <executionId> <step>` (their records are in their own logs: `loomwork follow <executionId>`).",
      "With --postgres: the execution's stream (app.stream in an app with no effects on the fleet's schema) while a worker runs it: " +
        "its recorded turns, then the deltas as they come, a line per tool call, tool result and step end, and its end. " +
        "It runs nothing and takes no lease; the schema must hold a fleet (exit 3 otherwise). The database is only the one " +
        "--postgres names ($DATABASE_URL is not read: without --postgres, follow reads the journal directory).",
      "Exit code: 0 when the execution ends done, 1 when it ends in error or stopped, 130 on Ctrl-C.",
      'With --json: one JSON object per line: { "record": <record as journaled> } or { "delta": <stream part: index, stepId, type, delta?; a sub-agent\'s with executionId, agent, parentToolCallId> }; ' +
        'with --postgres, { "delta": <part> } for every part of the stream (text-delta, tool-call, tool-result, finish-step, error, ...).',
    ],
    examples: [
      "loomwork follow research-1",
      "loomwork follow chat-1 --json | jq -c 'select(.delta) | .delta.delta'",
      "loomwork follow chat-42 --postgres $DATABASE_URL",
    ],
  },
  async (ctx) => {
    const executionId = ctx.positionals[0]!;
    const fleet = postgresTarget(ctx, { fromEnv: false });
    return fleet ? followFleet(ctx, executionId, fleet) : followJournal(ctx, executionId);
  },
);

// The journal directory's execution: its records from the log file, its deltas from the app's control socket.
async function followJournal(ctx: Context, executionId: string): Promise<ExitCode> {
  const stores = await ctx.journal();
  const info = await requireExecution(stores, executionId);
  const { c, json } = ctx;
  const prefix = `${info.logicId ?? ""}#`;
  const width = Math.max(60, (process.stdout.columns ?? (Number(process.env.COLUMNS) || 120)) - 34);
  const full = ctx.values.full === true;
  const settled = new Set<string>();
  let started: number | undefined;
  let ended: StoredRecord | undefined;
  const write = writer(c);
  const deltas = new DeltaLines(write, c, prefix);
  const show = (record: StoredRecord) => {
    started ??= record.at;
    if (record.type === STEP_COMPLETED || record.type === STEP_FAILED) settled.add(String(record.stepId));
    if (record.type === EXECUTION_ENDED) ended = record;
    if (json) return write(`${jsonText({ record })}\n`);
    deltas.end();
    const time = isInput(record) ? gap(record.at - started) : "";
    ctx.out(
      `${c.dim(String(record.seq).padStart(5))}  ${c.dim(time.padEnd(10))} ${line(record, { c, width, full, prefix, stepWidth: 14, effectWidth: 10 })}`,
    );
  };
  // Read in the read form as they come: the expander carries what derives a record's fields from one read to the next.
  const expander = new RecordExpander();
  const records = expander.expand(await readStoredRecords(stores, executionId));
  if (!json) header(ctx, executionId, info.logicId);
  records.forEach(show);
  const outcome = (): ExitCode => (ended?.status === "done" ? EXIT.ok : EXIT.failure);
  if (ended) return outcome();

  const paths = ExecutionPaths.of(ctx.dir, executionId);
  const tail = new LogTail(paths.log, paths.name, records.at(-1)?.seq ?? 0);
  let wake: () => void = () => undefined;
  let interrupted = false;
  const onSigint = () => ((interrupted = true), wake());
  process.once("SIGINT", onSigint);
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(paths.dir, () => wake());
    watcher.on("error", () => undefined);
  } catch {
    watcher = undefined; // polling alone
  }
  let client: ControlClient | undefined;
  try {
    // The records are read from the log whatever the socket is: one that is not this user's app's costs the deltas only.
    const warn = (error: unknown) =>
      ctx.err(ctx.e.yellow(`no live deltas: ${error instanceof Error ? error.message : String(error)}`));
    client = await connectControl(ctx.dir).catch((error: unknown) => void warn(error));
    client?.stream(
      executionId,
      (part) => {
        // A sub-agent's part (a lead's stream carries its tree's): shown with its agent and execution.
        const from = typeof part.executionId === "string" ? part.executionId : undefined;
        if ((from === undefined && settled.has(String(part.stepId))) || ended) return;
        if (json) return write(`${jsonText({ delta: part })}\n`);
        deltas.add(part);
      },
      (error) => {
        if (error) warn(error);
        wake();
      },
    );
    while (!ended && !interrupted) {
      for (const record of expander.expand(await tail.read())) show(record);
      if (ended || interrupted) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        wake = () => (clearTimeout(timer), resolve());
      });
    }
  } finally {
    process.off("SIGINT", onSigint);
    watcher?.close();
    client?.close();
    if (!json) deltas.end();
  }
  return interrupted && !ended ? EXIT.interrupted : outcome();
}

// A fleet's execution: app.stream in an app with no effects on the fleet's schema follows it wherever a worker runs
// it (the worker's deltas through the schema's stream items, ADR 0019). Nothing is written.
async function followFleet(ctx: Context, executionId: string, { url, schema }: PostgresTarget): Promise<ExitCode> {
  await requireFleet(url, schema);
  // Loaded only here: follow on a journal directory never loads node-postgres.
  const { postgresStores } = await import("../../adapters/postgres/index.js");
  const { createApp, defineConfig } = await import("../../index.js");
  const stores = await postgresStores({ url, schema, max: 2 });
  const app = createApp(defineConfig({ stores, effects: {} }));
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once("SIGINT", onSigint);
  const { c, json } = ctx;
  const write = writer(c);
  try {
    const info = await stores.events.getExecution(executionId);
    if (!info)
      throw new NotFoundError(
        `no execution "${executionId}" in schema "${schema}"`,
        "Check the id, --postgres and --schema: `loomwork queues` reads the same database.",
      );
    const prefix = `${info.logicId ?? ""}#`;
    const width = Math.max(60, (process.stdout.columns ?? (Number(process.env.COLUMNS) || 120)) - 34);
    const full = ctx.values.full === true;
    const deltas = new DeltaLines(write, c, prefix);
    // A tool result names the call by its id (in its execution: a sub-agent's ids are its own); the tool is the call's.
    const tools = new Map<string, string>();
    if (!json) header(ctx, executionId, info.logicId);
    for await (const part of app.stream(executionId, { signal: stop.signal })) {
      if (json) {
        write(`${jsonText({ delta: part })}\n`);
        continue;
      }
      if (SHOWN_DELTAS.has(part.type)) {
        deltas.add(part);
        continue;
      }
      if (part.type === "tool-call" && part.id !== undefined) tools.set(callKey(part), part.toolName ?? "?");
      const text = partLine(part, { c, width, full, prefix, tools });
      if (text === undefined) continue;
      deltas.end();
      ctx.out(`${c.dim(String(part.index).padStart(5))}  ${" ".repeat(10)} ${text}`);
    }
    deltas.end();
    // The stream ends with the execution, or at Ctrl-C: the catalogue says which.
    const status = (await stores.events.getExecution(executionId))?.status;
    if (stop.signal.aborted && status === "running") return EXIT.interrupted;
    // Ended in error or stopped: the stream's last part (error, abort) said why.
    if (status !== "done") return EXIT.failure;
    const output = await app.result(executionId);
    if (!json)
      ctx.out(
        `${" ".repeat(INDENT)}${c.green("■ ended")} ${c.green("done")}${output === undefined ? "" : ` ${c.dim("output")} ${valueText(output, width - 20, full)}`}`,
      );
    return EXIT.ok;
  } finally {
    process.off("SIGINT", onSigint);
    try {
      await app.close();
    } finally {
      await stores.close();
    }
  }
}

const callKey = (part: StreamPart) => `${part.executionId ?? ""}\n${part.id ?? ""}`;

// The schema holds a fleet's tables: checked with a connection of its own before the stores are opened, since
// opening them creates the schema (a mistyped --schema would leave an empty fleet behind).
async function requireFleet(url: string, schema: string): Promise<void> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ table: string | null }>("SELECT to_regclass($1)::text AS table", [
      `"${schema}".executions`,
    ]);
    if (rows[0]?.table == null)
      throw new NotFoundError(`no fleet in schema "${schema}"`, "Check --schema and --postgres.");
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot read the fleet's database: ${(error as Error).message}`, EXIT.failure);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The line a stream part other than a delta shows, or undefined for the parts that show none (start-step, tool input). */
function partLine(
  part: StreamPart,
  o: { c: Palette; width: number; full: boolean; prefix: string; tools: ReadonlyMap<string, string> },
): string | undefined {
  const { c } = o;
  const step = printable(stepLabel(part, o.prefix));
  const id = printable(part.id ?? "?");
  // The tool's name and a space; none for a result whose call the stream did not name (a handoff's).
  const tool = (name: string | undefined) => {
    const known = name ?? (part.id === undefined ? undefined : o.tools.get(callKey(part)));
    return known === undefined ? "" : `${c.blue(printable(known))} `;
  };
  const value = (v: unknown) => valueText(v, o.width - 30, o.full);
  switch (part.type) {
    case "tool-call":
      return `${c.cyan(padEndTo("→ call", 8))} ${padEndTo(step, 14)} ${tool(part.toolName)}${value(part.input)} ${c.dim(id)}`;
    case "tool-result":
      return `${part.isError ? c.red("✗ result") : c.green("✓ result")} ${padEndTo(step, 14)} ${tool(undefined)}${value(part.output)}`;
    case "tool-approval-request":
      return `${c.yellow(padEndTo("⏸ waits", 8))} ${padEndTo(step, 14)} ${tool(part.toolName)}${c.dim(id)} for a human's decision`;
    case "tool-approval-response":
      return `${part.approved ? c.green("● approved") : c.red("● denied")} ${id}${part.reason ? ` ${printable(part.reason)}` : ""}`;
    case "retry":
      return `${c.yellow(padEndTo("↻ retry", 8))} ${step} ${c.dim("(its deltas so far are void: another attempt follows)")}`;
    case "finish-step":
      return c.dim(`  ↳ ${step} finished`);
    case "error":
      return `${c.red("■ ended")} ${c.red("error")} ${part.executionId === undefined ? "" : `${step} `}${c.red(printable(part.error ?? ""))}`;
    case "abort":
      return `${c.red("■ ended")} ${c.red("stopped")} ${part.executionId === undefined ? "" : `${step} `}${printable(part.reason ?? "")}`;
    default:
      return undefined;
  }
}

function header(ctx: Context, executionId: string, logicId: string | undefined): void {
  const { c } = ctx;
  ctx.out(
    `${c.bold(printable(executionId))} ${c.dim("·")} ${printable(logicId ?? "?")} ${c.dim("·")} following since ${timestamp(Date.now())} ${c.dim("(Ctrl-C to stop)")}`,
  );
}

// Output as it comes, unbuffered by lines (deltas run on): a closed pipe ends it; controls are escaped (terminal.ts).
const writer =
  (c: Palette) =>
  (text: string): void =>
    void (process.stdout.destroyed || process.stdout.write(terminalLine(text, c.on)));

/** The fields of a stream part the lines read: an app.stream part, or one the control socket relayed. */
interface PartFields {
  type?: unknown;
  stepId?: unknown;
  delta?: unknown;
  executionId?: unknown;
  agent?: unknown;
}

/** A part's step as a line names it: `<step>` for the followed execution's own, `<agent> <executionId> <step>` for a sub-agent's. */
function stepLabel(part: PartFields, prefix: string): string {
  if (typeof part.executionId !== "string") return String(part.stepId).replace(prefix, "");
  const agent = typeof part.agent === "string" ? part.agent : "?";
  return `${agent} ${part.executionId} ${String(part.stepId).replace(`${agent}#`, "")}`;
}

/** A model's text and reasoning deltas as they stream: each step's run on a line of its own, under `⋯ <step>`. */
class DeltaLines {
  private open = false;
  private source = "";
  constructor(
    private readonly write: (text: string) => void,
    private readonly c: Palette,
    private readonly prefix: string,
  ) {}

  add(part: PartFields): void {
    if (!SHOWN_DELTAS.has(String(part.type)) || typeof part.delta !== "string") return;
    const source = `${typeof part.executionId === "string" ? part.executionId : ""}\n${String(part.stepId)}`;
    if (this.open && source !== this.source) this.write("\n");
    if (!this.open || source !== this.source)
      this.write(`${" ".repeat(INDENT)}${this.c.dim(printable(`⋯ ${stepLabel(part, this.prefix)}`))} `);
    this.open = true;
    this.source = source;
    // A model's text runs over lines: its newlines and tabs are kept, every other control is escaped.
    const text = printable(part.delta, { lines: true });
    this.write(part.type === "reasoning-delta" ? this.c.dim(text) : text);
  }

  /** Ends the open run of deltas, if any: before a line of another kind, and at the end. */
  end(): void {
    if (this.open) this.write("\n");
    this.open = false;
  }
}
