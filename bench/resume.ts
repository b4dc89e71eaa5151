// Measurement 2: resuming an interrupted execution (stopped at its last tool call, so the resume has a
// tail to replay after the latest snapshot) against the floor: reading the same bytes and JSON.parse'ing
// them. fs in fresh processes (`node --import tsx`, resume and floor alike); memory and IndexedDB in-process.
import { IDBKeyRange } from "fake-indexeddb";
import { indexedDbStores } from "../adapters/indexeddb/index.js";
import { utf8Length } from "../stores/bytes.js";
import { memoryStores } from "../stores/memory.js";
import type { Stores } from "../stores/types.js";
import { EXECUTION_ID, resumeInterrupted, runInterrupted } from "./agent.js";
import { interleave, median, ratioOf, span, type Sample } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { bytes, ratio, ratios, type Cell, type Goal, type Section, type Table } from "./report.js";
import { resumePhases } from "./resumeBreakdown.js";
import { runChild, type ChildReport } from "./spawn.js";
import { diskUsage } from "./storeBytes.js";
import { openStores, type BenchStores } from "./stores.js";

const GOAL = 2;
const NO_SAMPLE: Sample = { wall: Number.NaN, cpu: Number.NaN };

interface Result {
  store: string;
  turns: number;
  bytes: number;
  ratio: Sample;
  /** fs only: whole-process ratio and the share of the resume spent opening the directory. */
  process?: number;
  /** fs only: the same resume in a fresh process whose runtime code ran once before it (untimed), vs the floor. */
  warm?: Sample;
  openShare?: number;
  replay?: { fromSnapshotSeq: number; recordsReplayed: number; stepsToRun: number };
  /** fs only: each phase of a resume in its own fresh process, in units of the floor (median). */
  phases?: { phase: string; ratio: number }[];
  /** fs only: the real resume cut by marks in one fresh process (they sum to it), with the GC inside each phase, in units of the floor (medians). */
  timeline?: { phase: string; ratio: number; gc: number }[];
  floor: string;
  goal: boolean;
}

const childSample = (r: ChildReport): Sample => ({ wall: r.ms, cpu: Number(r.cpuMs) });

/** Which journal a resume starts from: the tail after the last snapshot (the default close, as after a crash), or a snapshot at the head (`snapshotOnClose`). */
type Variant = "close" | "tail";
const variantName = (store: string, variant: Variant) =>
  variant === "tail" ? store : `${store}, closed with snapshotOnClose (no tail)`;

async function resumeFs(turns: number, reps: number, warmup: number, variant: Variant): Promise<Result> {
  const bench = await openStores("fs");
  if (bench.kind !== "fs") throw new Error("unreachable");
  await runInterrupted(bench.stores, turns, "off", variant === "close");
  await bench.close();
  const reports: Record<"floor" | "resume" | "timeline" | "warm", ChildReport[]> = {
    floor: [],
    resume: [],
    timeline: [],
    warm: [],
  };
  const samples = await interleave(
    {
      floor: async () =>
        childSample((reports.floor[reports.floor.length] = await runChild("floorFs", { dir: bench.dir }))),
      resume: async () =>
        childSample((reports.resume[reports.resume.length] = await runChild("resumeFs", { dir: bench.dir, turns }))),
      // The real resume again, cut by marks (bench/child/resumeFsTimeline.ts), interleaved with the floor it is divided by.
      timeline: async () =>
        childSample(
          (reports.timeline[reports.timeline.length] = await runChild("resumeFsTimeline", { dir: bench.dir, turns })),
        ),
      // The same resume with the runtime's code run once before it in the process (untimed): what cold code costs.
      warm: async () =>
        childSample(
          (reports.warm[reports.warm.length] = await runChild("resumeFs", { dir: bench.dir, turns, warm: true })),
        ),
    },
    { reps, warmup },
  );
  const kept = (name: "floor" | "resume" | "timeline" | "warm") => reports[name].slice(-reps);
  // The same resume, phase by phase, each run in a fresh process of its own (cold, like the real one).
  const phaseRuns: Record<string, number>[] = [];
  for (let i = 0; i < (variant === "tail" ? reps : 0); i++)
    phaseRuns.push((await runChild("resumeFsPhases", { dir: bench.dir, turns })).phases as Record<string, number>);
  const timelineRuns = kept("timeline");
  const floor = median(kept("floor").map((r) => r.ms));
  const timelineOf = (key: "phases" | "gc", phase: string) =>
    median(timelineRuns.map((r) => (r[key] as Record<string, number>)[phase]!)) / floor;
  const timelinePhases = Object.keys((timelineRuns[0]?.phases ?? {}) as Record<string, number>);
  return {
    timeline: [
      ...timelinePhases.map((phase) => ({ phase, ratio: timelineOf("phases", phase), gc: timelineOf("gc", phase) })),
      {
        phase: "the whole resume (the sum of the phases)",
        ratio: median(timelineRuns.map((r) => r.ms)) / floor,
        gc: median(timelineRuns.map((r) => Number(r.gcMs))) / floor,
      },
    ],
    ...(variant === "tail"
      ? {
          phases: Object.keys(phaseRuns[0] ?? {}).map((phase) => ({
            phase,
            ratio: median(phaseRuns.map((p) => p[phase]!)) / floor,
          })),
        }
      : {}),
    store: variantName("fs (fresh process)", variant),
    turns,
    bytes: (await diskUsage(bench.dir, ["content"])).apparent,
    ratio: ratioOf(samples.resume!, samples.floor!),
    warm: ratioOf(samples.warm!, samples.floor!),
    process: median(kept("resume").map((r) => r.sinceStart)) / median(kept("floor").map((r) => r.sinceStart)),
    openShare: median(kept("resume").map((r) => Number(r.openMs) / r.ms)),
    replay: kept("resume")[0]?.replay as Result["replay"],
    floor: "readFile of the catalogue checkpoint, log and snapshot + JSON.parse of every frame",
    goal: true,
  };
}

/** The JSON texts a memory or IndexedDB resume decodes: the stored snapshot and the live log. */
async function storedTexts(stores: Stores): Promise<string[]> {
  return [
    JSON.stringify((await stores.events.getSnapshot(EXECUTION_ID)) ?? null),
    JSON.stringify(await stores.events.read(EXECUTION_ID)),
  ];
}

async function rawIndexedDbRead(factory: IDBFactory, name: string): Promise<void> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const request = factory.open(name);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const tx = db.transaction(["snapshots", "records"], "readonly");
  const get = <T>(request: IDBRequest<T>) =>
    new Promise<T>(
      (resolve, reject) => (
        (request.onsuccess = () => resolve(request.result)),
        (request.onerror = () => reject(request.error))
      ),
    );
  const [snapshot] = await Promise.all([
    get(tx.objectStore("snapshots").get(EXECUTION_ID)),
    get(tx.objectStore("records").getAll(IDBKeyRange.bound([EXECUTION_ID, -Infinity], [EXECUTION_ID, Infinity]))),
  ]);
  // A snapshot row of IndexedDB schema version 2 keeps the state as JSON text: the read is done once it is parsed.
  const text = (snapshot as { text?: unknown } | undefined)?.text;
  if (typeof text === "string") JSON.parse(text);
  db.close();
}

async function resumeInProcess(
  bench: BenchStores,
  turns: number,
  reps: number,
  warmup: number,
  variant: Variant,
): Promise<Result[]> {
  await runInterrupted(bench.stores, turns, "off", variant === "close");
  const texts = await storedTexts(bench.stores);
  let replay: Result["replay"];
  const variants: Record<string, () => Promise<Sample>> = {
    floor: async () => {
      const end = span();
      for (const text of texts) JSON.parse(text);
      return end();
    },
    resume: async () => {
      const end = span();
      // A fresh app over the same storage: IndexedDB is opened again, as a reloaded page does.
      const stores =
        bench.kind === "indexeddb"
          ? await indexedDbStores({ name: bench.name, indexedDB: bench.factory, IDBKeyRange, locks: null })
          : bench.stores;
      const { app } = await resumeInterrupted(stores, turns);
      const sample = end();
      replay = (await app.resume(EXECUTION_ID)).replay;
      await app.close();
      if (stores !== bench.stores) await (stores as { close(): Promise<void> }).close();
      return sample;
    },
  };
  // IndexedDB's own floor: open it and read the snapshot and every record in one read-only transaction.
  if (bench.kind === "indexeddb")
    variants.idbRead = async () => ((end) => rawIndexedDbRead(bench.factory, bench.name).then(end))(span());
  const samples = await interleave(variants, { reps, warmup });
  await bench.close();
  const common = { turns, bytes: texts.reduce((n, t) => n + utf8Length(t), 0), replay };
  const results: Result[] = [
    {
      ...common,
      store: variantName(`${bench.kind} (in-process)`, variant),
      ratio: ratioOf(samples.resume!, samples.floor!),
      floor: "JSON.parse of the stored snapshot's and log's JSON text",
      goal: true,
    },
  ];
  if (samples.idbRead) {
    results.push({
      ...common,
      store: variantName("indexeddb (in-process), against its own read", variant),
      ratio: ratioOf(samples.resume!, samples.idbRead),
      floor:
        "open + one read-only transaction getting the snapshot and every record (+ JSON.parse of a snapshot kept as JSON text)",
      goal: false,
    });
  }
  return results;
}

/**
 * What running the runtime's code once first takes off a fresh process's resume beyond the floor (1.00x),
 * from the cold and warm ratios: a share over one half is called most of it. Empty when either is missing.
 */
function coldShare(cold: number | undefined, warm: number | undefined): string {
  if (cold === undefined || warm === undefined || !Number.isFinite(cold) || !Number.isFinite(warm) || cold <= 1)
    return "";
  const share = Math.max(0, Math.min(1, (cold - warm) / (cold - 1)));
  return `: ${share > 0.5 ? "most" : share > 0 ? "less than half" : "none"} of what a fresh process pays beyond the floor (${Math.round(share * 100)}%) is code running for the first time, which V8 compiles (lazily, at first call) and interprets, while the floor runs almost none`;
}

/** "a (2.1x), b (1.3x), c (0.9x)": the three largest phases, "of which" and "for scale" rows left out. */
function largest(phases: { phase: string; ratio: number }[]): string {
  return phases
    .filter((p) => !p.phase.trimStart().startsWith("of which") && !p.phase.startsWith("for scale"))
    .sort((a, b) => b.ratio - a.ratio)
    .slice(0, 3)
    .map((p) => `${p.phase} (${ratio(p.ratio)} the floor)`)
    .join(", ");
}

async function resumeAll(turns: number, options: BenchOptions): Promise<Result[]> {
  const results: Result[] = [];
  for (const variant of ["tail", "close"] as const) {
    results.push(
      await resumeFs(turns, options.reps, options.warmup, variant),
      ...(await resumeInProcess(await openStores("memory"), turns, options.inProcessReps, options.warmup, variant)),
      ...(await resumeInProcess(await openStores("indexeddb"), turns, options.inProcessReps, options.warmup, variant)),
    );
  }
  return results;
}

const resultCells = (r: Result): Cell[] => [
  r.store,
  r.turns,
  bytes(r.bytes),
  ratios(r.ratio),
  r.goal ? (r.ratio.wall <= GOAL ? "met" : "**missed**") : "",
  r.floor,
  r.replay
    ? `from the snapshot at seq ${r.replay.fromSnapshotSeq}: ${r.replay.recordsReplayed} records, ${r.replay.stepsToRun} call re-started`
    : "",
];

const resultGoals = (results: Result[], full: boolean): Goal[] =>
  results
    .filter((r) => r.goal)
    .map((r) => ({
      ...(full ? { full: true as const } : {}),
      goal: `resume within ${GOAL}x of the floor: ${r.store}, ${r.turns} turns`,
      met: r.ratio.wall <= GOAL,
      detail: ratios(r.ratio),
    }));

export async function measureResume(options: BenchOptions): Promise<Section> {
  const results: Result[] = [];
  const fullResults: Result[] = [];
  for (const turns of options.resumeTurns) results.push(...(await resumeAll(turns, options)));
  for (const turns of options.fullResumeTurns) fullResults.push(...(await resumeAll(turns, options)));
  const table: Table = {
    head: [
      "store",
      "turns",
      "bytes read by the floor",
      "resume / floor (median wall; CPU)",
      `≤ ${GOAL}x`,
      "floor",
      "replayed",
    ],
    rows: results.map(resultCells),
    fullRows: fullResults.map(resultCells),
  };
  const processCells = (r: Result): Cell[] => [
    r.store,
    r.turns,
    ratio(r.process!),
    `${(100 * r.openShare!).toFixed(0)}%`,
    ratios(r.warm!),
  ];
  const processTable: Table = {
    caption:
      "fs: the whole fresh process (node bootstrap, the tsx loader and the imports included), the share of the resume spent in `fsStores` (recovery, the writer lock), " +
      "and the same resume in a fresh process that first ran the runtime's code once, untimed (a 20-turn run interrupted and resumed on the memory store: the fs adapter's code stays cold), interleaved with the others",
    head: [
      "store",
      "turns",
      "resume process / floor process",
      "fsStores open / resume",
      "resume with its code warm / floor",
    ],
    rows: results.filter((r) => r.process !== undefined).map(processCells),
    fullRows: fullResults.filter((r) => r.process !== undefined).map(processCells),
  };
  // The breakdown: the recover phases one by one on a memory store, at the first turn count.
  const turns = options.resumeTurns[0]!;
  const stores = memoryStores();
  await runInterrupted(stores, turns);
  const breakdown = await resumePhases(stores, turns, options.inProcessReps);
  const phaseTable: Table = {
    caption: `Where a tail replay's time goes (${turns} turns, memory, in-process; ${breakdown.macrosteps} macrosteps / ${breakdown.turnsReplayed} turns replayed), each phase in units of the floor`,
    head: ["phase", "time / floor (median)"],
    rows: breakdown.phases.map((p) => [p.phase, ratio(p.ms / breakdown.floor)]),
  };
  const fsPhases = results.find((r) => r.phases)?.phases ?? [];
  const fsPhaseTable: Table = {
    caption: `Where a tail replay from fs goes (${turns} turns), each phase in a fresh process of its own, in units of the floor process's work. \`events.read(id, fromSeq)\` reads the log from the tail mark the snapshot file holds (O(tail) bytes)`,
    head: ["phase", "time / floor (median)"],
    rows: fsPhases.map((p) => [p.phase, ratio(p.ratio)]),
  };
  const timelineOf = (variant: Variant) =>
    results.find((r) => r.store === variantName("fs (fresh process)", variant))?.timeline ?? [];
  const [timeline, closeTimeline] = [timelineOf("tail"), timelineOf("close")];
  const timelineTable: Table = {
    caption:
      `The whole resume from fs (${turns} turns), as a tail replay (the default) and after a close with snapshotOnClose, cut by marks in one fresh process (the fs event store's getSnapshot and read wrapped to note when they start and end, the stalled effect noting its call), so the phases sum to the resume; ` +
      "garbage collection inside each phase from PerformanceObserver's gc entries; in units of the floor process's work, medians",
    head: ["phase", "tail replay: time / floor", "of which GC", "snapshotOnClose: time / floor", "of which GC"],
    rows: timeline.map((p, i) => [
      p.phase,
      ratio(p.ratio),
      ratio(p.gc),
      ratio(closeTimeline[i]?.ratio ?? Number.NaN),
      ratio(closeTimeline[i]?.gc ?? Number.NaN),
    ]),
  };
  const goals = [...resultGoals(results, false), ...resultGoals(fullResults, true)];
  const tailFs = results.find((r) => r.store === variantName("fs (fresh process)", "tail"));
  return {
    id: "resume",
    title: "2. Resume vs the floor",
    method: [
      "The run stops at its last tool call (a tool that never resolves) and the app is closed: the journal holds every other turn. " +
        "The latest snapshot is then behind the head, as after a crash, and a resume replays the tail; the rows marked snapshotOnClose close the app with `execution.snapshotOnClose: true` (a graceful shutdown), which writes a snapshot at the head: nothing to replay (the fs directory itself is closed cleanly in both). " +
        "A resume builds a new app over the same storage, rebuilds the actor from the snapshot, replays the tail (no model or tool re-run) and re-starts the stalled call; it is timed until `app.resume` resolves. " +
        `fs: each resume and each floor runs in its own fresh \`node --import tsx\` process, timed inside it after its imports. Memory and IndexedDB (fake-indexeddb): in-process. ` +
        `${options.reps} repetitions for fs (${options.inProcessReps} in-process), interleaved, medians of wall-clock and of CPU time; claim-check off.`,
    ],
    tables: [table, processTable, timelineTable, fsPhaseTable, phaseTable],
    goals,
    notes: [
      `Largest phases of the whole fs tail replay (fresh process, one process cut by marks): ${largest(timeline.filter((p) => !p.phase.startsWith("the whole")))}; garbage collection inside it: ${ratio(timeline.at(-1)?.gc ?? Number.NaN)} the floor (the resume's process holds the heap of the runtime's imports; the floor's imports only node:fs).`,
      `Cold code: the same resume after the runtime's code has run once in its process takes ${ratios(tailFs?.warm ?? NO_SAMPLE)} the floor (tail replay, ${turns} turns), against ${ratios(tailFs?.ratio ?? NO_SAMPLE)} cold${coldShare(tailFs?.ratio.wall, tailFs?.warm?.wall)}. Node 20 has no compile cache for ES modules (Node 22 has one: \`NODE_COMPILE_CACHE\` since 22.1, \`module.enableCompileCache()\` since 22.8).`,
      `Largest phases on fs (fresh process): ${largest(fsPhases.map((p) => ({ phase: p.phase, ratio: p.ratio })))}.`,
      `Largest phases on memory (in-process): ${largest(breakdown.phases.map((p) => ({ phase: p.phase, ratio: p.ms / breakdown.floor })))}.`,
      "What the phases point at: the tail is replayed through XState's transition for every record (a replayed turn's model request, the taint-fenced transcript, is built lazily and never for a turn served from the log; " +
        "a spawn no longer copies the per-child-id counters, which grew by one entry per tool call); a resume takes its identity from the journaled start instead of hashing the definition, " +
        "and restores a context that held no actor ref without XState's walk over it; " +
        "on fs, `events.read(id, fromSeq)` reads only the tail (from the mark in the snapshot file, verified; node:zlib's native CRC-32), and a fresh process runs the replay as cold code, while the floor is one native JSON.parse per frame of the whole journal.",
    ],
    raw: { results, fullResults, breakdown },
  };
}
