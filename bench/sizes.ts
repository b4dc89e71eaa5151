// Measurement 1: folded state and log bytes per row (turns x claim-check), on memory, fs and IndexedDB,
// beside Loom's published figures (ADR 0140 "Measured"); the slope per turn; the log by record type.
import { utf8Length } from "../stores/bytes.js";
import type { StoredRecord } from "../stores/types.js";
import { CLAIM_CHECK_MODES, EXECUTION_ID, runAgent, type ClaimCheckMode } from "./agent.js";
import type { BenchOptions } from "./options.js";
import { bytes, kb, KB, ratio, type Cell, type Goal, type Section, type Table } from "./report.js";
import { contentBytes, diskUsage, indexedDbBytes, snapshotBytes } from "./storeBytes.js";
import { openStores, STORE_KINDS } from "./stores.js";
import { join } from "node:path";

/** Loom's figures (KB) from ADR 0140 "Measured": [state, log]. */
export const LOOM: Record<number, Record<ClaimCheckMode, [number, number]>> = {
  50: { off: [297.8, 4043], on: [70.8, 953], "on, preview: false": [43.0, 551] },
  200: { off: [1201.4, 60421], on: [283.4, 13807], "on, preview: false": [172.1, 7787] },
};

/** Loom's state is linear in turns: its per-turn slope between its two rows, for rows it did not publish. */
function loomState(turns: number, mode: ClaimCheckMode): { kb: number; extrapolated: boolean } {
  const published = LOOM[turns]?.[mode];
  if (published) return { kb: published[0], extrapolated: false };
  const [a, b] = [LOOM[50]![mode][0], LOOM[200]![mode][0]];
  return { kb: a + ((b - a) / 150) * (turns - 50), extrapolated: true };
}

interface Row {
  turns: number;
  mode: ClaimCheckMode;
  records: number;
  stateBytes: number;
  logBytes: number;
  snapshot: { seq: number; bytes: number };
  memory: { log: number; snapshot: number; blobs: number; blobBytes: number };
  fs: { journal: { apparent: number; allocated: number }; content: { apparent: number; allocated: number } };
  indexeddb: Record<string, number>;
  statsAgree: boolean;
  byType: Record<string, { records: number; bytes: number }>;
}

/** Bytes of the log by record kind: model / tool step outcomes, transitions, the rest. */
function logByType(records: StoredRecord[]): Record<string, { records: number; bytes: number }> {
  const out: Record<string, { records: number; bytes: number }> = {};
  for (const record of records) {
    const step =
      typeof record.stepId === "string"
        ? (/:(model|tool|compact)(?::\d+)?$/.exec(record.stepId)?.[1] ?? "step")
        : undefined;
    const key = step ? `${record.type} (${step})` : record.type;
    const slot = (out[key] ??= { records: 0, bytes: 0 });
    slot.records++;
    slot.bytes += utf8Length(JSON.stringify(record));
  }
  return out;
}

async function measureRow(turns: number, mode: ClaimCheckMode): Promise<Row> {
  const partial: Partial<Row> = { turns, mode };
  const stats: { stateBytes: number; logBytes: number; records: number }[] = [];
  for (const kind of STORE_KINDS) {
    const bench = await openStores(kind);
    const { app } = await runAgent(bench.stores, turns, mode);
    const s = await app.stats(EXECUTION_ID);
    stats.push(s);
    const snapshot = await snapshotBytes(bench.stores, EXECUTION_ID);
    if (bench.kind === "memory") {
      const records = await bench.stores.events.read(EXECUTION_ID);
      const blobs = await contentBytes(bench.stores);
      Object.assign(partial, { ...s, snapshot, byType: logByType(records) });
      partial.memory = { log: s.logBytes, snapshot: snapshot.bytes, blobs: blobs.blobs, blobBytes: blobs.bytes };
    }
    await app.close();
    await bench.close();
    if (bench.kind === "fs") {
      const journal = await diskUsage(bench.dir, ["content"]);
      const content = await diskUsage(join(bench.dir, "content"));
      partial.fs = { journal, content };
    }
    if (bench.kind === "indexeddb") partial.indexeddb = await indexedDbBytes(bench.factory, bench.name);
  }
  partial.statsAgree = stats.every(
    (s) =>
      s.stateBytes === stats[0]!.stateBytes && s.logBytes === stats[0]!.logBytes && s.records === stats[0]!.records,
  );
  return partial as Row;
}

const slope = (a: Row, b: Row, key: "stateBytes" | "logBytes") => (b[key] - a[key]) / (b.turns - a.turns);

function mainCells(r: Row): Cell[] {
  const loom = loomState(r.turns, r.mode);
  const loomLog = LOOM[r.turns]?.[r.mode]?.[1];
  return [
    r.turns,
    r.mode,
    r.records,
    bytes(r.stateBytes),
    bytes(r.logBytes),
    ratio(r.logBytes / r.stateBytes),
    `${bytes(r.snapshot.bytes)} @ seq ${r.snapshot.seq}`,
    `${loom.extrapolated ? "≈" : ""}${kb(loom.kb * KB)}${loom.extrapolated ? " (extrapolated)" : ""}`,
    loomLog === undefined ? "" : kb(loomLog * KB),
    `${ratio(r.stateBytes / (loom.kb * KB))} ${r.stateBytes <= loom.kb * KB ? "met" : "**missed**"}`,
    r.logBytes <= 2 * r.stateBytes ? "met" : "**missed**",
  ];
}

function storeCells(r: Row): Cell[] {
  const idb = r.indexeddb;
  return [
    r.turns,
    r.mode,
    bytes(r.memory.log + r.memory.snapshot),
    `${r.memory.blobs} = ${bytes(r.memory.blobBytes)}`,
    `${bytes(r.fs.journal.apparent)} / ${kb(r.fs.journal.allocated)}`,
    `${bytes(r.fs.content.apparent)} / ${kb(r.fs.content.allocated)}`,
    bytes((idb.records ?? 0) + (idb.snapshots ?? 0) + (idb.executions ?? 0)),
    bytes((idb.blobBytes ?? 0) + (idb.blobMeta ?? 0)),
  ];
}

/** Bytes per added turn between consecutive rows, per mode; linear when the slopes are within 1.25x. */
function slopeTable(rows: Row[], caption: string): { table: Table; nonLinear: string[] } {
  const turns = [...new Set(rows.map((r) => r.turns))].sort((a, b) => a - b);
  const table: Table = {
    caption,
    head: ["claim-check", "of", ...turns.slice(1).map((t, i) => `${turns[i]} → ${t}`), "max / min"],
    rows: [],
  };
  const nonLinear: string[] = [];
  for (const mode of CLAIM_CHECK_MODES) {
    const byTurns = rows.filter((r) => r.mode === mode).sort((a, b) => a.turns - b.turns);
    for (const key of ["stateBytes", "logBytes"] as const) {
      const values = byTurns.slice(1).map((r, i) => slope(byTurns[i]!, r, key));
      const spread = Math.max(...values) / Math.min(...values);
      if (values.length > 1 && spread > 1.25) nonLinear.push(`${mode} ${key === "stateBytes" ? "state" : "log"}`);
      table.rows.push([
        mode,
        key === "stateBytes" ? "state" : "log",
        ...values.map((v) => `${Math.round(v).toLocaleString("en-US")} B`),
        values.length > 1 ? ratio(spread) : "n/a",
      ]);
    }
  }
  return { table, nonLinear };
}

/** The three goals of measurement 1 over `rows`. */
function sizeGoals(rows: Row[], full: boolean): Goal[] {
  const tag = full ? { full: true as const } : {};
  const turns = [...new Set(rows.map((r) => r.turns))];
  const judged = full ? rows.filter((r) => r.turns >= 1000) : rows;
  const stateMisses = judged.filter((r) => r.stateBytes > loomState(r.turns, r.mode).kb * KB);
  const logMisses = judged.filter((r) => r.logBytes > 2 * r.stateBytes);
  const { nonLinear } = slopeTable(rows, "");
  const at200 = CLAIM_CHECK_MODES.map((m) =>
    ratio((rows.find((r) => r.turns === 200 && r.mode === m)?.stateBytes ?? NaN) / (LOOM[200]![m][0] * KB)),
  ).join(" / ");
  const where = full
    ? ` at ${judged
        .map((r) => r.turns)
        .filter((t, i, a) => a.indexOf(t) === i)
        .join(", ")} turns`
    : "";
  return [
    {
      ...tag,
      goal: `state no larger than Loom's in every row${where}${full ? " (Loom extrapolated)" : ""}`,
      met: judged.length === 0 ? "not measured" : stateMisses.length === 0,
      detail:
        stateMisses.length > 0
          ? `missed in ${stateMisses.map((r) => `${r.turns} ${r.mode}`).join(", ")}`
          : full
            ? "every row"
            : `every row; at 200 turns ${at200} of Loom's (off / on / preview: false)`,
    },
    {
      ...tag,
      goal: `log no more than 2x our state in every row${where}`,
      met: logMisses.length === 0,
      detail:
        logMisses.length === 0
          ? `max ${ratio(Math.max(...judged.map((r) => r.logBytes / r.stateBytes)))}`
          : `missed in ${logMisses.map((r) => `${r.turns} turns ${r.mode} (${ratio(r.logBytes / r.stateBytes)})`).join(", ")}: see the log by record type`,
    },
    {
      ...tag,
      goal: `state and log linear in turns (slopes within 1.25x of each other${full ? ", 1,000 turns included" : ""})`,
      met: turns.length < 3 ? "not measured" : nonLinear.length === 0,
      detail:
        turns.length < 3
          ? "needs three rows"
          : nonLinear.length === 0
            ? "every mode, state and log"
            : `not linear: ${nonLinear.join(", ")}`,
    },
  ];
}

export async function measureSizes(options: BenchOptions): Promise<Section> {
  const rows: Row[] = [];
  const fullRows: Row[] = [];
  for (const turns of options.sizeTurns) for (const mode of CLAIM_CHECK_MODES) rows.push(await measureRow(turns, mode));
  for (const turns of options.fullSizeTurns)
    for (const mode of CLAIM_CHECK_MODES) fullRows.push(await measureRow(turns, mode));
  const all = [...rows, ...fullRows];

  const main: Table = {
    caption:
      "Folded state and log (`app.stats()`: UTF-8 bytes of the folded state at the head and of the records' JSON; identical on memory, fs and IndexedDB)",
    head: [
      "turns",
      "claim-check",
      "records",
      "folded state",
      "log",
      "log / state",
      "latest snapshot",
      "Loom state",
      "Loom log",
      "state vs Loom",
      "log ≤ 2x state",
    ],
    rows: rows.map(mainCells),
    fullRows: fullRows.map(mainCells),
  };
  const perStore: Table = {
    caption:
      "Bytes per store (fs: apparent size / allocated as `du` counts it; IndexedDB: JSON bytes of the stored values, blobs by byte length)",
    head: [
      "turns",
      "claim-check",
      "memory: log + snapshot",
      "memory: blobs",
      "fs: journal dir",
      "fs: content dir",
      "IndexedDB: records + snapshot + catalogue",
      "IndexedDB: blobs",
    ],
    rows: rows.map(storeCells),
    fullRows: fullRows.map(storeCells),
  };
  const tables: Table[] = [
    main,
    perStore,
    slopeTable(rows, "Slope per turn between rows (bytes per added turn)").table,
  ];
  if (fullRows.length > 0)
    tables.push({
      ...slopeTable(all, "Slope per turn between rows, 1,000 turns included (bytes per added turn)").table,
      full: true,
    });

  const at = rows.some((r) => r.turns === 200) ? 200 : options.sizeTurns.at(-1)!;
  const breakdown: Table = {
    caption: `The log by record type at ${at} turns (what to shrink next)`,
    head: ["claim-check", "record", "records", "bytes", "share of the log", "bytes per record"],
    rows: [],
  };
  for (const r of rows.filter((x) => x.turns === at)) {
    for (const [type, v] of Object.entries(r.byType).sort((a, b) => b[1].bytes - a[1].bytes)) {
      breakdown.rows.push([
        r.mode,
        type,
        v.records,
        bytes(v.bytes),
        `${((100 * v.bytes) / r.logBytes).toFixed(1)}%`,
        Math.round(v.bytes / v.records),
      ]);
    }
  }
  tables.push(breakdown);

  const notes: string[] = [];
  if (all.some((r) => !r.statsAgree))
    notes.push("**app.stats() differed between stores in some rows** (it should not: the records are the same).");
  notes.push(
    "KB = 1,000 bytes, as in `spec/claimCheck/measured.test.ts`. Loom's rows beyond 200 turns are extrapolated from its own 50/200 rows (its state is linear); its log is quadratic, so it is not extrapolated.",
    '"latest snapshot" is the stored snapshot a resume starts from (one every 64 records; the runtime keeps the newest).',
    "The log is counted as the stores hold it: the stored form of journal schema 3 (ADR 0009), where a `loom.transition` carries no `from`, no `event` its input record derives (an agent tool's names its child id as `actor`), and a model step no `usage` its output already holds; `app.log` reads the records back whole.",
  );
  return {
    id: "sizes",
    title: "1. Folded state and log bytes",
    method: [
      "The seeds' harness (`spec/support/workload.ts`): a real `defineConfig` app and `agentLoop$` on the scripted model, 1.5-4 kB of seeded tool output per turn, no compaction; one execution per store, run to its end on memory, fs (a temp directory) and IndexedDB (fake-indexeddb).",
    ],
    tables,
    goals: [...sizeGoals(rows, false), ...(fullRows.length > 0 ? sizeGoals(all, true) : [])],
    notes,
    raw: all,
  };
}
