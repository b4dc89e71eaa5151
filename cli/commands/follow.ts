// loomwork follow <executionId>: the execution's records as they are journaled, and its model's live
// deltas when the app that runs it serves its control socket; until the execution ends or Ctrl-C.
import { watch, type FSWatcher } from "node:fs";
import { ExecutionPaths } from "../../adapters/fs/journalFiles.js";
import { EXECUTION_ENDED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import { command } from "../context.js";
import { connectControl, type ControlClient } from "../control.js";
import { EXIT, type ExitCode } from "../errors.js";
import { readStoredRecords, requireExecution } from "../journal.js";
import { RecordExpander } from "../../stores/recordFormat.js";
import { LogTail } from "../tail.js";
import { gap, jsonText, printable, terminalLine, timestamp } from "../terminal.js";
import { isInput, line } from "./log.js";

/** How often the log is looked at when no file event came (fs.watch misses some, on some file systems). */
const POLL_MS = 250;
const SHOWN_DELTAS = new Set(["text-delta", "reasoning-delta"]);

export const follow = command(
  "follow",
  "Follow an execution live: its records as they are journaled, and its model's deltas as they stream.",
  {
    args: { "<executionId>": "the execution to follow" },
    options: { full: { type: "boolean", description: "print values whole instead of cut to the terminal's width" } },
    details: [
      "Prints the timeline so far (as `loomwork log` does), then each record as it is appended, until the execution ends or Ctrl-C. " +
        "Read-only: it takes no lock, so it works beside the app that writes the journal; the log file is watched (fs.watch, and a " +
        `look every ${POLL_MS} ms).`,
      "Model deltas are never journaled: they are shown when the app serves its control socket (serveControl from loomwork/fs); " +
        "without one, only the records are shown, each as it is appended.",
      "A lead's sub-agents (agentTool) stream with it: their deltas are shown under `⋯ <agent> <executionId> <step>` (their records are in their own logs: `loomwork follow <executionId>`).",
      "Exit code: 0 when the execution ends done, 1 when it ends in error or stopped, 130 on Ctrl-C.",
      'With --json: one JSON object per line: { "record": <record as journaled> } or { "delta": <stream part: index, stepId, type, delta?; a sub-agent\'s with executionId, agent, parentToolCallId> }.',
    ],
    examples: ["loomwork follow research-1", "loomwork follow chat-1 --json | jq -c 'select(.delta) | .delta.delta'"],
  },
  async (ctx) => {
    const executionId = ctx.positionals[0]!;
    const stores = await ctx.journal();
    const info = await requireExecution(stores, executionId);
    const { c, json } = ctx;
    const prefix = `${info.logicId ?? ""}#`;
    const width = Math.max(60, (process.stdout.columns ?? (Number(process.env.COLUMNS) || 120)) - 34);
    const full = ctx.values.full === true;
    const settled = new Set<string>();
    let started: number | undefined;
    let inDelta = false;
    let deltaSource = "";
    let ended: StoredRecord | undefined;
    const write = (text: string) => void (process.stdout.destroyed || process.stdout.write(terminalLine(text, c.on)));
    const show = (record: StoredRecord) => {
      started ??= record.at;
      if (record.type === STEP_COMPLETED || record.type === STEP_FAILED) settled.add(String(record.stepId));
      if (record.type === EXECUTION_ENDED) ended = record;
      if (json) return write(`${jsonText({ record })}\n`);
      if (inDelta) write("\n");
      inDelta = false;
      const time = isInput(record) ? gap(record.at - started) : "";
      ctx.out(
        `${c.dim(String(record.seq).padStart(5))}  ${c.dim(time.padEnd(10))} ${line(record, { c, width, full, prefix, stepWidth: 14, effectWidth: 10 })}`,
      );
    };
    // Read in the read form as they come: the expander carries what derives a record's fields from one read to the next.
    const expander = new RecordExpander();
    const records = expander.expand(await readStoredRecords(stores, executionId));
    if (!json)
      ctx.out(
        `${c.bold(printable(executionId))} ${c.dim("·")} ${printable(info.logicId ?? "?")} ${c.dim("·")} following since ${timestamp(Date.now())} ${c.dim("(Ctrl-C to stop)")}`,
      );
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
          if (!SHOWN_DELTAS.has(String(part.type)) || typeof part.delta !== "string") return;
          const source = `${from ?? ""}\n${String(part.stepId)}`;
          if (inDelta && source !== deltaSource) write("\n");
          if (!inDelta || source !== deltaSource) {
            const agent = typeof part.agent === "string" ? part.agent : "?";
            const step =
              from === undefined
                ? String(part.stepId).replace(prefix, "")
                : String(part.stepId).replace(`${agent}#`, "");
            const label = from === undefined ? `⋯ ${step}` : `⋯ ${agent} ${from} ${step}`;
            write(`${" ".repeat(18)}${c.dim(printable(label))} `);
          }
          inDelta = true;
          deltaSource = source;
          // A model's text runs over lines: its newlines and tabs are kept, every other control is escaped.
          const text = printable(part.delta, { lines: true });
          write(part.type === "reasoning-delta" ? c.dim(text) : text);
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
      if (inDelta && !json) write("\n");
    }
    return interrupted && !ended ? EXIT.interrupted : outcome();
  },
);
