// Measurement: opening an fs directory of many executions and listing them, against a bare read of its
// catalogue checkpoint, each in a fresh process; at two scales, to show the time is linear in executions.
import { fsStores } from "../adapters/fs/index.js";
import { EXECUTION_ENDED, EXECUTION_STARTED, STEP_COMPLETED } from "../stores/schema.js";
import type { StoredRecord } from "../stores/types.js";
import { interleave, median, ratioOf, type Sample } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { bytes, ratio, ratios, type Section, type Table } from "./report.js";
import { runChild, type ChildReport } from "./spawn.js";
import { tempDir } from "./stores.js";

const GOAL = 3;
/** Per-execution time at the larger scale within this factor of the smaller one's: linear. */
const LINEAR = 1.5;

// What a short finished run leaves: started, three steps, ended (the catalogue entry carries its subject and logic).
function executionRecords(i: number): StoredRecord[] {
  const at = 1_700_000_000_000 + i;
  return [
    {
      seq: 1,
      at,
      type: EXECUTION_STARTED,
      subject: `user-${i % 97}`,
      logicId: "agent",
      machineHash: "sha256:0",
      version: "1",
    },
    ...[2, 3, 4].map((seq) => ({ seq, at, type: STEP_COMPLETED, stepId: `s${seq}`, output: { n: i, text: "ok" } })),
    { seq: 5, at, type: EXECUTION_ENDED, status: "done" },
  ] as StoredRecord[];
}

/** A directory of `count` executions, written by the fs adapter itself (fsync skipped: only the bytes matter here). */
async function generate(count: number): Promise<string> {
  const dir = await tempDir(`open-${count}`);
  const skip = async () => undefined;
  const stores = await fsStores({ dir, fsOps: { fsync: skip, fsyncDir: skip } });
  for (let i = 0; i < count; i += 64) {
    await Promise.all(
      Array.from({ length: Math.min(64, count - i) }, (_, k) =>
        stores.events.append(`run-${String(i + k).padStart(6, "0")}`, 0, executionRecords(i + k)),
      ),
    );
  }
  await stores.close();
  return dir;
}

interface Row {
  executions: number;
  open: Sample;
  catalogue: Sample;
  ratio: Sample;
  catalogueBytes: number;
  phases: Record<string, number>;
}

const sample = (r: ChildReport): Sample => ({ wall: r.ms, cpu: Number(r.cpuMs) });

async function measureScale(count: number, reps: number, warmup: number): Promise<Row> {
  const dir = await generate(count);
  const reports: Record<string, ChildReport[]> = { open: [], catalogue: [] };
  const samples = await interleave(
    Object.fromEntries(
      ["open", "catalogue"].map((variant) => [
        variant,
        async () =>
          sample((reports[variant]![reports[variant]!.length] = await runChild("openListFs", { dir, variant }))),
      ]),
    ),
    { reps, warmup },
  );
  for (const r of reports.open!)
    if (r.executions !== count) throw new Error(`listed ${String(r.executions)} of ${count} executions`);
  const phaseRuns: Record<string, number>[] = [];
  for (let i = 0; i < Math.max(1, Math.floor(reps / 2)); i++)
    phaseRuns.push((await runChild("openListFs", { dir, variant: "phases" })).phases as Record<string, number>);
  const catalogueMs = median(samples.catalogue!.map((s) => s.wall));
  const phases = Object.fromEntries(
    Object.keys(phaseRuns[0]!).map((p) => [p, median(phaseRuns.map((run) => run[p]!)) / catalogueMs]),
  );
  return {
    executions: count,
    open: { wall: median(samples.open!.map((s) => s.wall)), cpu: median(samples.open!.map((s) => s.cpu)) },
    catalogue: { wall: catalogueMs, cpu: median(samples.catalogue!.map((s) => s.cpu)) },
    ratio: ratioOf(samples.open!, samples.catalogue!),
    catalogueBytes: Number(reports.catalogue!.at(-1)!.bytes),
    phases,
  };
}

export async function measureOpenList(options: BenchOptions): Promise<Section> {
  const scales = options.mode === "quick" ? [50, 500] : [1_000, 10_000];
  const rows: Row[] = [];
  for (const count of scales) rows.push(await measureScale(count, options.reps, options.warmup));
  const [small, large] = [rows[0]!, rows.at(-1)!];
  const perExecution = large.open.wall / large.executions / (small.open.wall / small.executions);
  const table: Table = {
    head: [
      "executions",
      "catalogue.ckpt",
      "open + list / bare catalogue read (median wall; CPU)",
      `≤ ${GOAL}x`,
      "open + list per execution vs the smallest row",
    ],
    rows: rows.map((r) => [
      r.executions,
      bytes(r.catalogueBytes),
      ratios(r.ratio),
      r.ratio.wall <= GOAL ? "met" : "**missed**",
      ratio(r.open.wall / r.executions / (small.open.wall / small.executions)),
    ]),
  };
  const phaseTable: Table = {
    caption: `Where the open of ${large.executions.toLocaleString("en-US")} executions goes, phase by phase in a fresh process, in units of the bare catalogue read`,
    head: ["phase", "time / catalogue read (median)"],
    rows: Object.entries(large.phases).map(([phase, r]) => [phase, ratio(r)]),
  };
  return {
    id: "openList",
    title: "11. Opening a directory of many executions",
    method: [
      `Directories of ${scales.map((s) => s.toLocaleString("en-US")).join(" and ")} finished executions (5 records each), written by the fs adapter and closed. ` +
        "Each fresh `node --import tsx` process either opens the directory with `fsStores` and lists every execution (`events.listExecutions()`), or reads `catalogue.ckpt` and JSON.parses it (no checksum): the floor. " +
        "The directories were closed cleanly, so the open trusts the clean checkpoint and recovers each log at its first use (ADR 0008); after a crash it recovers every log: the phase table's full recovery row. " +
        `Timed inside the process after its imports; ${options.reps} repetitions, interleaved, medians.`,
    ],
    tables: [table, phaseTable],
    goals: [
      {
        goal: `open + list within ${GOAL}x of a bare catalogue read: fs, ${large.executions.toLocaleString("en-US")} executions`,
        met: large.ratio.wall <= GOAL,
        detail: ratios(large.ratio),
      },
      {
        goal: `open + list linear in executions: per execution at ${large.executions.toLocaleString("en-US")} within ${LINEAR}x of ${small.executions.toLocaleString("en-US")}`,
        met: perExecution <= LINEAR,
        detail: ratio(perExecution),
      },
    ],
    notes: [],
    raw: { rows },
  };
}
