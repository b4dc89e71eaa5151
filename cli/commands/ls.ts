// loomwork ls: the executions of a journal, from its catalogue (no log is read).
import type { ExecutionInfo } from "../../index.js";
import { RUNTIME_ID_PREFIX } from "../../actors/constants.js";
import { EXECUTION_STARTED } from "../../stores/schema.js";
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
      tree: {
        type: "boolean",
        description:
          "child executions under their parents, indented (a child's parent is read from its start record; JSON adds parentId and depth)",
      },
    },
    details: [
      "Read from the catalogue and the file sizes, so it is fast on large journals. `running` means unfinished: no " +
        "process is writing the journal while the CLI holds it, so a running execution waits for an app to resume it.",
      "`damaged` means a journal file is damaged (a bad frame, a missing or cut log, a log behind its snapshot): reads and resumes " +
        "are refused until the file is restored; the line under the table says which file, where, and what survives. Nothing was deleted.",
    ],
    examples: [
      "loomwork ls",
      "loomwork ls --status running",
      "loomwork ls --subject user-42 --json",
      "loomwork ls --tree",
    ],
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
    const treeRows = ctx.values.tree === true ? await asTree(stores.events, rows) : undefined;
    if (ctx.json) return ctx.printJson(treeRows ?? rows);
    const { c } = ctx;
    if (rows.length === 0) {
      ctx.out(c.dim(`no executions${status || subject ? " match" : ""} in ${ctx.dir}`));
      return;
    }
    const paint = (s: string) => (s === "done" ? c.green(s) : s === "running" ? c.yellow(s) : c.red(s));
    const lines = table(
      [
        ["EXECUTION", "LOGIC", "SUBJECT", "STATUS", "RECORDS", "ON DISK", "STARTED", "LAST WRITE"].map((h) => c.dim(h)),
        ...(treeRows ?? rows).map((r) => [
          ("depth" in r && typeof r.depth === "number" && r.depth > 0 ? `${" ".repeat(r.depth * 2 - 1)}└ ` : "") +
            // The runtime's own executions (loom.sweep:<n>, loom.erase:<subject>:<n>) are its audit trail.
            (r.logicId?.startsWith(RUNTIME_ID_PREFIX)
              ? c.dim(printable(r.executionId))
              : c.bold(printable(r.executionId))),
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

/**
 * The rows in tree order: each child execution after its parent (children in the order listed), with its parentId
 * and depth. A row is a child when its start record names a parent that is listed (an id like `a/b` alone is not
 * enough: a root may be named so); a sealed or archived start record leaves it a root.
 */
async function asTree<R extends { executionId: string }>(
  events: {
    read(executionId: string, fromSeq?: number): Promise<{ seq: number; type: string; [k: string]: unknown }[]>;
  },
  rows: readonly R[],
): Promise<(R & { parentId?: string; depth: number })[]> {
  const ids = new Set(rows.map((r) => r.executionId));
  const parentOf = new Map<string, string>();
  for (const r of rows) {
    if (!r.executionId.includes("/")) continue;
    const [first] = await events.read(r.executionId, 1).catch(() => []);
    const parent: unknown = first?.type === EXECUTION_STARTED ? first.parent : undefined;
    const parentId =
      typeof parent === "object" && parent !== null && "executionId" in parent ? parent.executionId : undefined;
    if (typeof parentId === "string" && ids.has(parentId)) parentOf.set(r.executionId, parentId);
  }
  const children = new Map<string, R[]>();
  for (const r of rows) {
    const p = parentOf.get(r.executionId);
    if (p !== undefined) children.set(p, [...(children.get(p) ?? []), r]);
  }
  const out: (R & { parentId?: string; depth: number })[] = [];
  const visit = (r: R, depth: number) => {
    const parentId = parentOf.get(r.executionId);
    out.push({ ...r, ...(parentId === undefined ? {} : { parentId }), depth });
    for (const child of children.get(r.executionId) ?? []) visit(child, depth + 1);
  };
  for (const r of rows) if (!parentOf.has(r.executionId)) visit(r, 0);
  return out;
}
