// loomwork log <executionId>: the execution's timeline, one line per record, grouped by macrostep.
import * as schema from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import { createJournalCodec } from "../../actors/journal/sealing.js";
import type { FsStores } from "../../adapters/fs/index.js";
import { SubjectErasedError } from "../../stores/errors.js";
import { command, type Context } from "../context.js";
import { isSealed, readRecords, readStoredRecords, requireExecution } from "../journal.js";
import { expandRecords } from "../../stores/recordFormat.js";
import { replyText, valueText } from "../render.js";
import {
  bytes,
  displayWidth,
  gap,
  jsonText,
  padEndTo,
  printable,
  progress,
  timestamp,
  type Palette,
} from "../terminal.js";

export const log = command(
  "log",
  "Show an execution's timeline: its start, every event, step outcome and transition, and its end.",
  {
    args: { "<executionId>": "the execution to show (see `loomwork ls`)" },
    options: {
      full: { type: "boolean", description: "print values whole instead of cut to the terminal's width" },
      decrypt: {
        type: "boolean",
        description: "open sealed records (security.crypto) with the subject's key from the directory's key store",
      },
    },
    details: [
      "Each input record (start, event, step outcome) opens a macrostep; the transition it caused is shown under it (↳).",
      "A claim-check envelope { __loomClaimCheck, ref, size, digest } is shown as ⧉ ref <address> (size) with its digest; " +
        "tainted values as tainted(<origin>) ...; sealed records (security.crypto) as sealed, with their readable ids.",
      "--decrypt opens them with the key in the directory's keys/ (an erased subject's records stay sealed: its key is destroyed).",
      "With --json: { execution, records } with the records as app.log reads them (opened with --decrypt).",
    ],
    examples: [
      "loomwork log research-1",
      "loomwork log research-1 --full",
      "loomwork log support-7 --decrypt",
      "loomwork log research-1 --json | jq '.records[] | select(.type == \"loom.step.completed\")'",
    ],
  },
  async (ctx) => {
    const stores = await ctx.journal();
    const executionId = ctx.positionals[0]!;
    const info = await requireExecution(stores, executionId);
    // Opened as stored, then read back in the read form (a sealed record's header is authenticated as it was written).
    const records =
      ctx.values.decrypt === true
        ? expandRecords(await decrypted(stores, executionId, await readStoredRecords(stores, executionId), ctx))
        : await readRecords(stores, executionId);
    if (ctx.json) return ctx.printJson({ execution: info, records });
    const { c } = ctx;
    const started = records[0]?.at ?? info.startedAt;
    ctx.out(
      `${c.bold(printable(executionId))} ${c.dim("·")} ${printable(info.logicId ?? "?")} ${c.dim("·")} ${statusText(info.status, c)} ${c.dim("·")} ${records.length} records ` +
        `${c.dim("·")} started ${timestamp(started)}${info.subject === undefined ? "" : ` ${c.dim("·")} subject ${printable(info.subject)}`}`,
    );
    const width = Math.max(60, (process.stdout.columns ?? (Number(process.env.COLUMNS) || 120)) - 34);
    const full = ctx.values.full === true;
    const bar = progress("reading", records.length, { atLeast: 5_000 });
    const prefix = `${info.logicId ?? ""}#`;
    const stepWidth = Math.max(
      0,
      ...records.map((r) => (typeof r.stepId === "string" ? displayWidth(r.stepId.replace(prefix, "")) : 0)),
    );
    const effectWidth = Math.max(
      0,
      ...records.map((r) => (typeof r.effectId === "string" ? displayWidth(r.effectId) : 0)),
    );
    records.forEach((record, i) => {
      bar.tick(i + 1);
      const time = isInput(record) ? gap(record.at - started) : "";
      ctx.out(
        `${c.dim(String(record.seq).padStart(5))}  ${c.dim(time.padEnd(10))} ${line(record, { c, width, full, prefix, stepWidth, effectWidth })}`,
      );
    });
    bar.end();
    if (info.status === "running")
      ctx.out(
        c.yellow(
          `              ⋯ unfinished: what was in flight has no outcome yet; it runs when an app calls app.resume(${jsonText(executionId)})`,
        ),
      );
  },
);

export const isInput = (r: StoredRecord) => schema.isMacrostepInputType(r.type);

function statusText(status: string, c: Palette): string {
  return status === "done" ? c.green(status) : status === "running" ? c.yellow(status) : c.red(status);
}

export function line(
  record: StoredRecord,
  o: { c: Palette; width: number; full: boolean; prefix: string; stepWidth: number; effectWidth: number },
): string {
  const { c, width, full } = o;
  // Every string field is shown as data (ids, types, states, messages); values go through render.ts, which does the same.
  const r = printableFields(record);
  const step = (id: unknown) => String(id).replace(o.prefix, "");
  if (isSealed(r)) {
    const ids = [r.stepId, r.effectId, r.timerId].filter((v) => v !== undefined).map(step);
    const move =
      r.type === schema.TRANSITION
        ? ` ${r.from === undefined ? "" : `${String(r.from ?? "(init)")} `}→ ${String(r.to)}`
        : "";
    return `${c.magenta("🔒")} ${r.type}${move}${ids.length ? ` ${ids.join(" ")}` : ""} ${c.dim(`sealed payload (${bytes(String(r.sealed).length)} base64)`)}`;
  }
  switch (r.type) {
    case schema.EXECUTION_STARTED:
      return `${c.cyan("▶ started")}  ${c.dim("input")} ${valueText(r.input, width - 16, full)}`;
    case schema.EVENT_RECEIVED: {
      const event = (r.event ?? {}) as { type?: string };
      const { type, ...payload } = event;
      const rest = Object.keys(payload).length ? ` ${valueText(payload, width - 20, full)}` : "";
      return r.timerId !== undefined
        ? `${c.cyan("⏰ timer")}  ${String(r.timerId)} fired ${c.bold(String(type))}${rest}`
        : `${c.cyan("● event")}    ${c.bold(String(type))}${rest}`;
    }
    case schema.STEP_COMPLETED: {
      const head = `${c.green("✓")} ${padEndTo(step(r.stepId), o.stepWidth)} ${c.blue(padEndTo(String(r.effectId), o.effectWidth))}`;
      const shown = replyText(r.output, width - 30, full) ?? valueText(r.output, width - 30, full);
      return `${head}  ${r.output === undefined ? c.dim("(no output)") : shown}`;
    }
    case schema.STEP_FAILED: {
      const error = (r.error ?? {}) as { name?: string; message?: string };
      const where = r.stoppedAt ? c.dim(` (stopped at ${String(r.stoppedAt)})`) : "";
      return `${c.red("✗")} ${padEndTo(step(r.stepId), o.stepWidth)} ${c.blue(padEndTo(String(r.effectId), o.effectWidth))}  ${c.red(`${error.name ?? "Error"}: ${error.message ?? ""}`)}${where}`;
    }
    case schema.TIMER_SET:
      return c.dim(
        `  ⏲ timer ${String(r.timerId)} set for ${timestamp(r.dueAt as number)} → ${String((r.event as { type?: string })?.type)}${timerReceiver(r.to)}`,
      );
    case schema.TRANSITION:
      return c.dim(
        `  ↳ ${r.from === null ? "(init) " : r.from === undefined ? "" : `${String(r.from)} `}→ ${String(r.to)}   ${String(r.event ?? "")}`,
      );
    case schema.EXECUTION_ENDED: {
      const status = String(r.status);
      const detail =
        status === "done"
          ? r.output === undefined
            ? ""
            : ` ${c.dim("output")} ${valueText(r.output, width - 20, full)}`
          : ` ${c.red(String((r.error as { message?: string })?.message ?? ""))}`;
      return `${status === "done" ? c.green("■ ended") : c.red("■ ended")} ${statusText(status, c)}${detail}`;
    }
    case schema.ERASURE_CONTENT_DELETE_INTENDED:
      return `${c.magenta("⌫ erasure")} intends to delete ${(r.addresses as unknown[] | undefined)?.length ?? 0} blobs of subject ${String(r.subject)}`;
    case schema.ERASURE_CONTENT_DELETED:
      return `${c.magenta("⌫ erasure")} deleted ${valueText(r.deleted, 40, full)}, retained ${valueText(r.retained, 40, full)} (intent seq ${String(r.intentSeq)})`;
    default: {
      const { seq: _seq, at: _at, type, ...rest } = r;
      return `${c.yellow("?")} ${type} ${valueText(rest, width - 20, full)}`;
    }
  }
}

function printableFields(record: StoredRecord): StoredRecord {
  return Object.fromEntries(
    Object.entries(record).map(([key, value]) => [key, typeof value === "string" ? printable(value) : value]),
  ) as StoredRecord;
}

// Sealed records opened with the subject's key from the directory; an erased subject's stay sealed.
async function decrypted(
  stores: FsStores,
  executionId: string,
  records: StoredRecord[],
  ctx: Context,
): Promise<StoredRecord[]> {
  if (!records.some(isSealed)) return records;
  try {
    return await createJournalCodec(stores.keys, stores.events).open(executionId, records);
  } catch (error) {
    if (!(error instanceof SubjectErasedError)) throw error;
    ctx.err(ctx.e.yellow(`the subject's key was destroyed (erased): its records stay sealed`));
    return records;
  }
}

// A delayed sendTo's receiver (TIMER_SET's `to`): a child execution's id, or a live source's child id.
function timerReceiver(to: unknown): string {
  if (typeof to === "string") return ` to ${to}`;
  if (typeof to === "object" && to !== null && "source" in to) return ` to source ${String(to.source)}`;
  return "";
}
