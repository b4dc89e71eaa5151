// loomwork ls: the executions of a journal, from its catalogue (no log is read).
import type { ExecutionInfo } from "../../index.js";
import { RUNTIME_ID_PREFIX } from "../../actors/constants.js";
import { command } from "../context.js";
import { UsageError } from "../errors.js";
import { executionDiskBytes, lastWrite } from "../journal.js";
import { bytes, printable, progress, table, timestamp } from "../terminal.js";

// "damaged" is not an ExecutionStatus: it selects the executions whose journal the store found damaged.
const STATUSES = ["running", "done", "error", "stopped", "damaged"];

// Ids in natural order: chat-2 before chat-10.
const NATURAL = new Intl.Collator("en", { numeric: true });

export const ls = command(
  "ls",
  "List the executions of a journal: id, logic, subject, status, records and bytes on disk.",
  {
    options: {
      status: {
        type: "string",
        value: "<status>",
        description:
          "only executions with this status: running, done, error, stopped, or damaged (a journal file is damaged)",
      },
      subject: { type: "string", value: "<subject>", description: "only executions holding this subject's data" },
    },
    details: [
      "Read from the catalogue and the file sizes, so it is fast on large journals. `running` means unfinished: no " +
        "process is writing the journal while the CLI holds it, so a running execution waits for an app to resume it.",
      "`damaged` means a journal file is damaged (a bad frame, a missing or cut log, a log behind its snapshot): reads and resumes " +
        "are refused until the file is restored; the line under the table says which file, where, and what survives. Nothing was deleted.",
    ],
    examples: ["loomwork ls", "loomwork ls --status running", "loomwork ls --subject user-42 --json"],
  },
  async (ctx) => {
    const status = ctx.values.status as string | undefined;
    if (status !== undefined && !STATUSES.includes(status))
      throw new UsageError(`--status must be one of ${STATUSES.join(", ")}; got "${status}"`);
    const stores = await ctx.journal();
    const subject = ctx.values.subject as string | undefined;
    const executions = (await stores.events.listExecutions())
      .filter(
        (e) =>
          (status === undefined || (status === "damaged" ? e.damaged !== undefined : e.status === status)) &&
          (subject === undefined || e.subject === subject),
      )
      .sort((a, b) => a.startedAt - b.startedAt || NATURAL.compare(a.executionId, b.executionId));
    const bar = progress("sizing", executions.length, { atLeast: 500 });
    const rows: (ExecutionInfo & { diskBytes: number; lastWriteAt?: number })[] = [];
    for (const [i, e] of executions.entries()) {
      const last = await lastWrite(ctx.dir, e.executionId);
      rows.push({
        ...e,
        diskBytes: await executionDiskBytes(ctx.dir, e.executionId),
        ...(last === undefined ? {} : { lastWriteAt: Math.round(last) }),
      });
      bar.tick(i + 1);
    }
    bar.end();
    if (ctx.json) return ctx.printJson(rows);
    const { c } = ctx;
    if (rows.length === 0) {
      ctx.out(c.dim(`no executions${status || subject ? " match" : ""} in ${ctx.dir}`));
      return;
    }
    const paint = (s: string) => (s === "done" ? c.green(s) : s === "running" ? c.yellow(s) : c.red(s));
    const lines = table(
      [
        ["EXECUTION", "LOGIC", "SUBJECT", "STATUS", "RECORDS", "ON DISK", "STARTED", "LAST WRITE"].map((h) => c.dim(h)),
        ...rows.map((r) => [
          // The runtime's own executions (loom.sweep:<n>, loom.erase:<subject>:<n>) are its audit trail.
          r.logicId?.startsWith(RUNTIME_ID_PREFIX) ? c.dim(printable(r.executionId)) : c.bold(printable(r.executionId)),
          printable(r.logicId ?? "?"),
          r.subject === undefined ? c.dim("—") : printable(r.subject),
          r.damaged ? c.red("damaged") : paint(r.status),
          String(r.head),
          bytes(r.diskBytes),
          timestamp(r.startedAt),
          timestamp(r.endedAt ?? r.lastWriteAt),
        ]),
      ],
      [4, 5],
    );
    for (const l of lines) ctx.out(l);
    const total = rows.reduce((n, r) => n + r.diskBytes, 0);
    const running = rows.filter((r) => r.status === "running" && !r.damaged).length;
    const damaged = rows.filter((r) => r.damaged);
    ctx.out(
      c.dim(
        `${rows.length} execution${rows.length === 1 ? "" : "s"}, ${bytes(total)} on disk${running ? `, ${running} unfinished` : ""}`,
      ) + (damaged.length ? c.red(`, ${damaged.length} damaged`) : ""),
    );
    for (const r of damaged)
      ctx.out(`${c.red("damaged")} ${c.bold(printable(r.executionId))}: ${printable(r.damaged!.message)}`);
  },
);
