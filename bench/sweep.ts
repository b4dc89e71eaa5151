// Measurement 6: the content sweep and the erase coordinator at scale: 1k / 10k / 100k blobs over
// 100 / 1k / 10k executions (10 retained claim-check blobs each), on memory and fs. Retention first deletes
// every fifth history, so a fifth of the blobs are reclaimable; then sweep(app, { ttlMs: 0 }) is timed, then
// eraseSubject(app, subject) of three subjects (10 executions each). Memory stores run in-process; fs runs in a fresh
// process with a capped heap, so finishing at all shows the sweep streams.
import { cp, rm } from "node:fs/promises";
import { runMaintenance, ERASURES, type MaintenanceReport } from "./maintenance.js";
import type { BenchOptions } from "./options.js";
import { bytes, ratio, type Cell, type Goal, type Section, type Table } from "./report.js";
import { runChild } from "./spawn.js";
import { generateSweepData, retiredExecutions, EXECUTIONS_PER_SUBJECT, BLOBS_PER_EXECUTION } from "./sweepData.js";
import { openStores } from "./stores.js";

/** The heap cap of the fs sweep's process (V8 old space), in MiB. */
export const FS_HEAP_CAP_MIB = 64;
/** fs sweep runs per size, each on its own copy of the data (the row is the median run): one run is at the mercy of one fsync stall. */
const FS_RUNS = 3;
/** From this many executions (the full run's 10,000) the fs sweep runs once. */
const FS_SINGLE_RUN_EXECUTIONS = 10_000;

interface Row extends MaintenanceReport {
  store: "memory" | "fs";
  blobs: number;
  executions: number;
  blobBytes: number;
  logBytes: number;
  /** fs: how many runs (on copies of the data) the row is the median of. */
  runs?: number;
}

async function measureScale(store: "memory" | "fs", executions: number): Promise<Row> {
  const bench = await openStores(store);
  const generated = await generateSweepData(bench.stores, executions);
  for (const id of retiredExecutions(executions)) await bench.stores.events.deleteHistory(id);
  const row = { store, blobs: generated.blobs, executions, blobBytes: generated.bytes, logBytes: generated.logBytes };
  if (bench.kind !== "fs") {
    const report = await runMaintenance(bench.stores, executions);
    await bench.close();
    return { ...row, ...report };
  }
  await bench.close();
  // The sweep is destructive: each run gets its own copy of the generated directory. The row is the run
  // with the median sweep time (one run at the largest full-run size, where a copy costs most).
  const runs = executions >= FS_SINGLE_RUN_EXECUTIONS ? 1 : FS_RUNS;
  const reports: MaintenanceReport[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const dir = i === runs - 1 ? bench.dir : `${bench.dir}-run${i}`;
      if (dir !== bench.dir) await cp(bench.dir, dir, { recursive: true });
      const child = await runChild("sweepFs", { dir, executions }, [`--max-old-space-size=${FS_HEAP_CAP_MIB}`]);
      if (dir !== bench.dir) await rm(dir, { recursive: true, force: true });
      reports.push(child.maintenance as MaintenanceReport);
    }
  } catch (error) {
    return { ...row, notMeasured: error instanceof Error ? error.message : String(error) };
  }
  const measured = reports.filter((r) => r.sweep).sort((a, b) => a.sweep!.ms - b.sweep!.ms);
  return { ...row, runs, ...(measured[Math.floor((measured.length - 1) / 2)] ?? reports[0]!) };
}

const num = (v: unknown) => (typeof v === "number" ? v : Array.isArray(v) ? v.length : NaN);
const HEAD = [
  "store",
  "blobs",
  "executions",
  "logs walked",
  "sweep: time vs the smallest row",
  "per blob",
  "sweep / one list() pass",
  "deleted / kept",
  "sweep: peak heap",
  "sweep: peak rss",
  "sweep: fsyncs",
  `erase (median of ${ERASURES}): time vs the smallest row`,
  "per execution",
  "erase: peak heap",
  "fsyncs per erase",
];

function cells(r: Row, base: Row | undefined): Cell[] {
  const lead: Cell[] = [r.store, r.blobs, r.executions, bytes(r.logBytes)];
  if (!r.sweep || !r.erase || !base?.sweep || !base.erase)
    return [
      ...lead,
      `not measured: ${r.notMeasured ?? "no baseline row"}`,
      ...HEAD.slice(lead.length + 1).map(() => ""),
    ];
  const sweepScale = r.sweep.ms / base.sweep.ms;
  const eraseScale = r.erase.ms / base.erase.ms;
  const fsyncs = (n: number | undefined) =>
    n === undefined || Number.isNaN(n) ? "n/a (memory)" : Math.round(n).toLocaleString("en-US");
  return [
    ...lead,
    ratio(sweepScale),
    ratio(sweepScale / (r.blobs / base.blobs)),
    r.listMs ? ratio(r.sweep.ms / r.listMs, 1) : "",
    `${num(r.sweep.result.deleted)} / ${num(r.sweep.result.kept)}`,
    bytes(r.sweep.heap),
    bytes(r.sweep.rss),
    fsyncs(r.sweep.fsyncs),
    ratio(eraseScale),
    ratio(eraseScale / (r.executions / base.executions)),
    bytes(r.erase.heap),
    fsyncs(r.erase.fsyncs),
  ];
}

/** Linearity (and, on fs, the heap cap) from the smallest to the largest row of one store. */
function goalsOf(store: "memory" | "fs", rows: Row[], full: boolean): Goal[] {
  const tag = full ? { full: true as const } : {};
  const measured = rows.filter((r) => r.sweep && r.erase);
  const failed = rows.find((r) => r.notMeasured);
  const goals: Goal[] = [];
  if (store === "fs") {
    const largest = rows.at(-1)!;
    goals.push({
      ...tag,
      goal: `sweep and erase stream (fs, ${largest.blobs.toLocaleString("en-US")} blobs): they finish in a process capped at a ${FS_HEAP_CAP_MIB} MiB heap`,
      met: failed?.notMeasured?.startsWith("ran out of heap") ? false : failed ? "not measured" : true,
      detail: failed
        ? failed.notMeasured!
        : `largest peak heap above the baseline, over every size: ${bytes(Math.max(...rows.map((r) => r.sweep!.heap)))}; the largest size walks ${bytes(largest.logBytes)} of logs`,
    });
  }
  if (measured.length < 2)
    return [
      ...goals,
      {
        ...tag,
        goal: `sweep and erase linear in scale (${store})`,
        met: "not measured",
        detail: failed?.notMeasured ?? "needs two sizes",
      },
    ];
  const [base, last] = [measured[0]!, measured.at(-1)!];
  const perBlob = last.sweep!.ms / base.sweep!.ms / (last.blobs / base.blobs);
  const perExecution = last.erase!.ms / base.erase!.ms / (last.executions / base.executions);
  const span = `${base.blobs.toLocaleString("en-US")} to ${last.blobs.toLocaleString("en-US")} blobs`;
  return [
    ...goals,
    {
      ...tag,
      goal: `sweep time linear in blobs (${store}, ${span}: per-blob time within 1.5x of the smallest row's)`,
      met: perBlob <= 1.5,
      detail: ratio(perBlob),
    },
    {
      ...tag,
      goal: `erase time linear in executions (${store}, ${span}: per-execution time within 1.5x)`,
      met: perExecution <= 1.5,
      detail: ratio(perExecution),
    },
  ];
}

/** fsyncs per deleted blob at or above which the sweep is said to make each delete durable on its own. */
const ONE_EACH = 0.9;

/** Where the largest fs sweep's time goes: its listing passes, and one fsync per deleted blob. */
function fsyncNotes(rows: Row[]): string[] {
  const largest = rows.at(-1);
  if (!largest?.sweep?.fsyncs || !largest.listMs) return [];
  const deleted = num(largest.sweep.result.deleted);
  const lists = largest.sweep.ms / largest.listMs;
  return [
    `The fs sweep of ${largest.blobs.toLocaleString("en-US")} blobs took ${ratio(lists, 1)} one listing pass; it lists the store once per reclaim batch (4 by default), so listing is up to ` +
      `${Math.min(100, Math.round(400 / lists))}% of it, and the rest is the scan of the logs and the deletes. It issued ${largest.sweep.fsyncs.toLocaleString("en-US")} fsyncs for ${deleted.toLocaleString("en-US")} blobs deleted: ` +
      (largest.sweep.fsyncs / deleted >= ONE_EACH
        ? `${(largest.sweep.fsyncs / deleted).toFixed(2)} per deleted blob, so deletes are made durable one by one, not group-committed.`
        : `${(largest.sweep.fsyncs / deleted).toFixed(2)} per deleted blob, so deletes share fsyncs.`) +
      (largest.erase?.fsyncs
        ? ` An erasure of ${EXECUTIONS_PER_SUBJECT} executions (about ${EXECUTIONS_PER_SUBJECT * BLOBS_PER_EXECUTION} blobs) issued ${largest.erase.fsyncs} fsyncs.`
        : ""),
  ];
}

export async function measureSweep(options: BenchOptions): Promise<Section> {
  const rows: Row[] = [];
  const fullRows: Row[] = [];
  for (const store of options.sweepStores) {
    for (const scale of options.sweepScales) rows.push(await measureScale(store, scale.executions));
    for (const scale of options.fullSweepScales) fullRows.push(await measureScale(store, scale.executions));
  }
  const baseOf = (store: string) => rows.find((r) => r.store === store && r.sweep && r.erase);
  const table: Table = {
    head: HEAD,
    rows: rows.map((r) => cells(r, baseOf(r.store))),
    fullRows: fullRows.map((r) => cells(r, baseOf(r.store))),
  };
  const goals = options.sweepStores.flatMap((store) => [
    ...goalsOf(
      store,
      rows.filter((r) => r.store === store),
      false,
    ),
    ...(fullRows.length > 0
      ? goalsOf(
          store,
          [...rows, ...fullRows].filter((r) => r.store === store),
          true,
        )
      : []),
  ]);
  return {
    id: "sweep",
    title: "6. The sweep and the erase coordinator at scale",
    method: [
      `Each execution is a real ${BLOBS_PER_EXECUTION + 1}-turn agent log (claim-check on, preview: false) with its own subject (${EXECUTIONS_PER_SUBJECT} executions per subject) and its own ${BLOBS_PER_EXECUTION} blobs of ~1.1 kB, ` +
        "appended through the store's ordinary `append`. Retention deletes every fifth history first, so a fifth of the blobs are cited by nothing. " +
        `Then \`sweep(app, { ttlMs: 0 })\` (every retained envelope is load-bearing, so it reclaims exactly the orphans), timed once per size on memory and, on fs, on ${FS_RUNS} copies of the same data (it is destructive; the row is the run with the median sweep time; once from ${(FS_SINGLE_RUN_EXECUTIONS * BLOBS_PER_EXECUTION).toLocaleString("en-US")} blobs), then \`eraseSubject(app, subject)\` of ${ERASURES} subjects one after another (median). ` +
        "Times are relative to the smallest row of the same store (linear = a per-blob / per-execution ratio near 1.00x or below; fixed costs make the small rows dearer per blob). " +
        `Memory stores run in-process (their data is in the heap's baseline); fs runs in a fresh process capped at \`--max-old-space-size=${FS_HEAP_CAP_MIB}\`, fsyncs counted through the \`fsOps\` seam. ` +
        "Peak memory: `process.memoryUsage()` sampled every 5 ms, above the baseline taken after a full GC just before (garbage not yet collected counts).",
    ],
    tables: [table],
    goals,
    notes: [
      '"sweep / one list() pass": the sweep\'s time in units of one streamed `content.list()` over the blobs left after it (the sweep lists the store once per reclaim batch, 4 by default, and each fs listing stats every blob file).',
      ...fsyncNotes(rows.filter((r) => r.store === "fs" && r.sweep)),
    ],
    fullNotes: fullRows.length > 0 ? fsyncNotes([...rows, ...fullRows].filter((r) => r.store === "fs" && r.sweep)) : [],
    raw: [...rows, ...fullRows],
  };
}
