// loomwork stats [executionId...]: log, state and disk bytes per execution, and what to look at.
import type { AnyStateMachine } from "xstate";
import { DEFAULT_STATE_GROWTH_WARN_BYTES } from "../../actors/agents/agentLoop.js";
import { STORE_ERROR_CODES, WARNING_CODES } from "../../actors/constants.js";
import { CLASSIC_CLAIM_CHECK_CAP_BYTES } from "../../actors/effects/claimCheck.js";
import { JournalCorruptionError } from "../../stores/errors.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import type { ExecutionInfo } from "../../stores/types.js";
import { selectExecutions } from "../../actors/journal/executionsQuery.js";
import type { FsStores } from "../../adapters/fs/index.js";
import { lockHeld } from "../../adapters/fs/lock.js";
import { command } from "../context.js";
import { EXIT } from "../errors.js";
import { executionDiskBytes, jsonBytes, readStoredRecords, requireExecution } from "../journal.js";
import { envelopesIn } from "../render.js";
import { bytes, printable, progress, table } from "../terminal.js";

/** A step output above this is worth a claim-check (the classic claim-check middleware's cap). */
const LARGE_OUTPUT_BYTES = CLASSIC_CLAIM_CHECK_CAP_BYTES;
/** The codes of the warnings `loomwork stats` gives (the runtime's own where it has one). */
const STATS_WARNINGS = {
  journalCorrupt: STORE_ERROR_CODES.journalCorrupt,
  agentStateGrowth: WARNING_CODES.agentStateGrowth,
  largeStepOutput: "LOOM_LARGE_STEP_OUTPUT",
  longReplay: "LOOM_LONG_REPLAY",
  unfinished: "LOOM_UNFINISHED",
  logicMissing: "LOOM_LOGIC_MISSING",
} as const;
/** A resume that replays more records than this since the last snapshot is slow to start. */
const LONG_REPLAY_RECORDS = 512;

interface Row {
  executionId: string;
  logicId?: string;
  subject?: string;
  status: string;
  records: number;
  logBytes: number;
  /** Bytes of the folded state; null when unknown (no snapshot and no --logic). */
  stateBytes: number | null;
  /** The seq the state was measured at. */
  stateSeq: number | null;
  stateSource: "replay" | "snapshot" | null;
  diskBytes: number;
  /** Claim-check envelopes the log cites. */
  refs: number;
  largestRecordBytes: number;
  corrupt?: string;
}

interface StatsWarning {
  code: string;
  executionId: string;
  message: string;
  [fact: string]: unknown;
}

export const stats = command(
  "stats",
  "Measure each execution: records, log bytes, folded-state bytes, bytes on disk; and warn about what grows.",
  {
    args: { "[executionId...]": "only these executions (default: all)" },
    options: {
      logic: {
        type: "string",
        value: "<module>",
        description:
          "a module exporting the machines (file.ts or file.ts#name): replays in memory for the exact state at the head",
      },
      tree: {
        type: "boolean",
        description:
          "each execution given with every child execution of its tree, at any depth (the totals are the tree's)",
      },
    },
    details: [
      "Log bytes are the UTF-8 bytes of the records' JSON text, as app.stats measures them. The folded state is what a resume " +
        "holds: without --logic it is read from the execution's snapshot, at the seq the snapshot was taken (shown as @seq when " +
        "older than the head; — when the execution has none yet); with --logic the records are replayed in memory (nothing is " +
        "written, no effect runs) and the state is measured at the head, exactly as app.stats does.",
      `Warnings: ${STATS_WARNINGS.journalCorrupt} (a damaged file; exit code 4), ${STATS_WARNINGS.agentStateGrowth} (state over 256 KiB: add compaction), ` +
        `${STATS_WARNINGS.largeStepOutput} (a step output over 16 KiB: consider execution.claimCheck for that tool), ${STATS_WARNINGS.longReplay} ` +
        `(over 512 records since the last snapshot), ${STATS_WARNINGS.unfinished} (running, and no process holds the journal: waiting for an app to resume it), ${STATS_WARNINGS.logicMissing} ` +
        "(--logic has no machine with the execution's logic id).",
    ],
    examples: [
      "loomwork stats",
      "loomwork stats research-1 --logic stories/support/researchAgent.ts",
      "loomwork stats order-7 --tree",
      "loomwork stats --json | jq '.warnings'",
    ],
  },
  async (ctx) => {
    const stores = await ctx.journal();
    const wanted = ctx.positionals;
    let infos: ExecutionInfo[] = wanted.length
      ? await Promise.all(wanted.map((id) => requireExecution(stores, id)))
      : await stores.events.listExecutions();
    if (ctx.values.tree === true && wanted.length) {
      // The trees under the executions given, from the catalogue's parent links (docs/actors.md).
      const all = await stores.events.listExecutions();
      const seen = new Set<string>();
      infos = wanted
        .flatMap((id) => selectExecutions(all, { root: id }))
        .filter((info) => !seen.has(info.executionId) && seen.add(info.executionId));
    }
    // The runtime is loaded only to replay (--logic): reading a journal needs the stores alone.
    const logics: AnyStateMachine[] =
      typeof ctx.values.logic === "string" ? await (await import("../replay.js")).loadLogics(ctx.values.logic) : [];
    const rows: Row[] = [];
    const warnings: StatsWarning[] = [];
    const bar = progress("measuring", infos.length, { atLeast: 20 });
    // A running execution is "unfinished" only when no process holds the journal (an app that does may be running it).
    const held = await lockHeld(ctx.dir);
    for (const [i, info] of infos.entries()) {
      rows.push(await measure(ctx.dir, stores, info, logics, warnings, held));
      bar.tick(i + 1);
    }
    bar.end();
    const totals = {
      executions: rows.length,
      records: sum(rows, (r) => r.records),
      logBytes: sum(rows, (r) => r.logBytes),
      // Known only when every execution's state was measured (a snapshot, or --logic): a partial sum is no total.
      stateBytes: rows.every((r) => r.stateBytes !== null) ? sum(rows, (r) => r.stateBytes ?? 0) : null,
      /** How many executions' state was measured. */
      stateMeasured: rows.filter((r) => r.stateBytes !== null).length,
      diskBytes: sum(rows, (r) => r.diskBytes),
    };
    const code = rows.some((r) => r.corrupt) ? EXIT.corrupt : EXIT.ok;
    if (ctx.json) {
      ctx.printJson({ dir: ctx.dir, executions: rows, totals, warnings });
      return code;
    }
    const { c } = ctx;
    if (rows.length === 0) {
      ctx.out(c.dim(`no executions in ${ctx.dir}`));
      return code;
    }
    const state = (r: Row) =>
      r.stateBytes === null
        ? c.dim("—")
        : `${bytes(r.stateBytes)}${r.stateSource === "snapshot" && r.stateSeq !== r.records ? c.dim(` @${r.stateSeq}`) : ""}`;
    const lines = table(
      [
        ["EXECUTION", "STATUS", "RECORDS", "LOG", "STATE", "ON DISK", "REFS"].map((h) => c.dim(h)),
        ...rows.map((r) =>
          r.corrupt
            ? [c.bold(printable(r.executionId)), c.red("corrupt"), "?", "?", "?", bytes(r.diskBytes), "?"]
            : [
                c.bold(printable(r.executionId)),
                r.status,
                String(r.records),
                bytes(r.logBytes),
                state(r),
                bytes(r.diskBytes),
                String(r.refs),
              ],
        ),
        [
          "total",
          "",
          String(totals.records),
          bytes(totals.logBytes),
          totals.stateBytes === null
            ? totals.stateMeasured === 0
              ? "—"
              : `${bytes(sum(rows, (r) => r.stateBytes ?? 0))} (${totals.stateMeasured} of ${rows.length})`
            : bytes(totals.stateBytes),
          bytes(totals.diskBytes),
          "",
        ].map((t) => c.bold(t)),
      ],
      [2, 3, 4, 5, 6],
    );
    for (const l of lines) ctx.out(l);
    if (rows.some((r) => r.stateSource !== "replay")) {
      ctx.out(
        c.dim(
          `STATE is read from each execution's snapshot (@seq when older than the head, — when none); --logic <module> measures it at the head.`,
        ),
      );
    }
    if (warnings.length) {
      ctx.out();
      ctx.out(c.bold(`${warnings.length} warning${warnings.length === 1 ? "" : "s"}`));
      for (const w of warnings)
        ctx.out(
          `  ${(w.code === STATS_WARNINGS.journalCorrupt ? c.red : c.yellow)(w.code)} ${c.bold(printable(w.executionId))}: ${printable(w.message)}`,
        );
    }
    return code;
  },
);

const sum = (rows: Row[], f: (r: Row) => number) => rows.reduce((n, r) => n + f(r), 0);

async function measure(
  dir: string,
  stores: FsStores,
  info: ExecutionInfo,
  logics: AnyStateMachine[],
  warnings: StatsWarning[],
  held: boolean,
): Promise<Row> {
  const id = info.executionId;
  const base = {
    executionId: id,
    ...(info.logicId === undefined ? {} : { logicId: info.logicId }),
    ...(info.subject === undefined ? {} : { subject: info.subject }),
    status: info.status,
    diskBytes: await executionDiskBytes(dir, id),
  };
  const warn = (code: string, message: string, facts: Record<string, unknown> = {}) =>
    warnings.push({ code, executionId: id, message, ...facts });
  try {
    // As stored: the bytes app.stats counts (a replay reads them back in the read form itself).
    const records = await readStoredRecords(stores, id);
    const snapshot = await stores.events.getSnapshot(id);
    let state: Pick<Row, "stateBytes" | "stateSeq" | "stateSource"> = snapshot
      ? { stateBytes: jsonBytes(snapshot.state), stateSeq: snapshot.seq, stateSource: "snapshot" }
      : { stateBytes: null, stateSeq: null, stateSource: null };
    const logic = logics.find((m) => m.id === info.logicId);
    if (logics.length && !logic)
      warn(
        STATS_WARNINGS.logicMissing,
        `--logic exports no machine "${info.logicId}": its state is read from the snapshot instead.`,
      );
    if (logic) {
      const bar = progress(`replaying ${id}`, records.length, { atLeast: 2_000 });
      const { replayInMemory } = await import("../replay.js");
      const replayed = await replayInMemory(id, records, logic, (n) => bar.tick(Math.min(n, records.length)));
      bar.end();
      state = {
        stateBytes: replayed.stateBytes,
        stateSeq: records.length ? records.at(-1)!.seq : 0,
        stateSource: "replay",
      };
    }
    let largestRecordBytes = 0;
    let logBytes = 0;
    let refs = 0;
    const large = new Map<string, { count: number; max: number; stepId: string }>();
    for (const r of records) {
      const size = jsonBytes(r);
      logBytes += size;
      largestRecordBytes = Math.max(largestRecordBytes, size);
      if (r.type !== STEP_COMPLETED) continue;
      refs += envelopesIn(r.output).length;
      const outputBytes = jsonBytes(r.output ?? null);
      if (outputBytes > LARGE_OUTPUT_BYTES) {
        const seen = large.get(String(r.effectId)) ?? { count: 0, max: 0, stepId: String(r.stepId) };
        large.set(String(r.effectId), {
          count: seen.count + 1,
          max: Math.max(seen.max, outputBytes),
          stepId: outputBytes > seen.max ? String(r.stepId) : seen.stepId,
        });
      }
    }
    if (state.stateBytes !== null && state.stateBytes > DEFAULT_STATE_GROWTH_WARN_BYTES) {
      warn(
        STATS_WARNINGS.agentStateGrowth,
        `the folded state is ${bytes(state.stateBytes)} (over ${bytes(DEFAULT_STATE_GROWTH_WARN_BYTES)}): every resume holds it. Bound an agent's transcript with compaction: { toolId, afterBytes } (docs/agents.md).`,
        { stateBytes: state.stateBytes },
      );
    }
    for (const [effectId, l] of large) {
      warn(
        STATS_WARNINGS.largeStepOutput,
        `${l.count} output${l.count === 1 ? "" : "s"} of effect "${effectId}" over ${bytes(LARGE_OUTPUT_BYTES)} (largest ${bytes(l.max)}, ${l.stepId}): consider execution.claimCheck for it (docs/scaling.md).`,
        { effectId, count: l.count, maxBytes: l.max },
      );
    }
    const sinceSnapshot = records.length - (snapshot?.seq ?? 0);
    if (sinceSnapshot > LONG_REPLAY_RECORDS) {
      warn(
        STATS_WARNINGS.longReplay,
        `a resume replays ${sinceSnapshot} records since ${snapshot ? `the snapshot at seq ${snapshot.seq}` : "the start (no snapshot)"}: check execution.snapshotEvery.`,
        { records: sinceSnapshot },
      );
    }
    if (info.status === "running" && !held)
      warn(
        STATS_WARNINGS.unfinished,
        "running but no process is writing this journal: it continues when an app calls app.resume(id).",
      );
    return { ...base, records: records.length, logBytes, ...state, refs, largestRecordBytes };
  } catch (error) {
    if (!(error instanceof JournalCorruptionError)) throw error;
    warn(STATS_WARNINGS.journalCorrupt, error.message, { file: error.file, offset: error.offset });
    return {
      ...base,
      records: info.head,
      logBytes: 0,
      stateBytes: null,
      stateSeq: null,
      stateSource: null,
      refs: 0,
      largestRecordBytes: 0,
      corrupt: error.message,
    };
  }
}
