// Measurement 3b: journaling on fs against its physical floor. The overhead run (measurement 3) on
// fsStores, beside the same run on memory and beside "bare": the durable operations that run did while it
// was timed (captured through the fs adapter's fsOps seam: every write's size and offset, every file and
// directory fsync, every rename), done again bare, in order, on the same disk, in a tree of files and
// directories shaped as the journal's, with no runtime, no framing and no encoding. What the fs run costs
// beyond memory + bare is what the adapter and the runtime add on top of durability itself.
import { readFileSync } from "node:fs";
import { mkdir, open, rename, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fsStores } from "../adapters/fs/index.js";
import { nodeFsOps, type FsOps } from "../adapters/fs/fsOps.js";
import { memoryStores } from "../stores/memory.js";
import { runJournaled } from "./overhead.js";
import { interleave, median, medianSample, span, type Sample } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { bytes, ratio, ratios, type Section } from "./report.js";
import { tempDir } from "./stores.js";

const GOAL = 1.25;
/** The fs run's wait for a CPU, as a share of its extra time on one, under which other threads are said not to have taken it. */
const QUEUED_SHARE = 0.25;

/** One durable operation the fs run did, as the adapter asked node:fs for it; files and directories by first-seen index. */
type DiskOp =
  | { op: "write"; file: number; size: number; position: number }
  | { op: "fsync"; file: number }
  | { op: "fsyncDir"; dir: number }
  | { op: "rename"; from: number; to: number };

/** The operations of one captured run, and the directory (by index) each file lives in. */
interface Capture {
  ops: DiskOp[];
  dirOf: Map<number, number>;
}

/** Records every durable operation issued while `recording()` holds, forwarding each to node:fs. */
function capturingOps(capture: Capture, recording: () => boolean): Partial<FsOps> {
  const files = new Map<string, number>();
  const dirs = new Map<string, number>();
  const idOf = (map: Map<string, number>, path: string) => map.get(path) ?? map.set(path, map.size).get(path)!;
  const dirId = (path: string) => idOf(dirs, path);
  const fileId = (path: string) => {
    const id = idOf(files, path);
    if (!capture.dirOf.has(id)) capture.dirOf.set(id, dirId(dirname(path)));
    return id;
  };
  const note = (op: () => DiskOp) => {
    if (recording()) capture.ops.push(op());
  };
  return {
    write: (handle, data, position, path) => (
      note(() => ({ op: "write", file: fileId(path), size: data.length, position })),
      nodeFsOps.write(handle, data, position, path)
    ),
    fsync: (handle, path) => (note(() => ({ op: "fsync", file: fileId(path) })), nodeFsOps.fsync(handle, path)),
    fsyncDir: (path) => (note(() => ({ op: "fsyncDir", dir: dirId(path) })), nodeFsOps.fsyncDir(path)),
    rename: (from, to) => (
      note(() => ({ op: "rename", from: fileId(from), to: fileId(to) })),
      nodeFsOps.rename(from, to)
    ),
  };
}

/** A timed sample with the main thread's own scheduling over the span (Linux: /proc/thread-self/schedstat). */
type ThreadSample = Sample & { onCpu?: number; queued?: number };

/** The calling thread's time on a CPU and waiting for one (ms), or undefined where the kernel does not say. */
function threadTimes(): { onCpu: number; queued: number } | undefined {
  try {
    const [onCpu, queued] = readFileSync("/proc/thread-self/schedstat", "utf8").trim().split(" ").map(Number);
    return onCpu === undefined || queued === undefined ? undefined : { onCpu: onCpu / 1e6, queued: queued / 1e6 };
  } catch {
    return undefined;
  }
}

/** `run` with the main thread's scheduling from its span's start to its end (told by `onSpan`) added to its sample. */
async function withThread(run: (onSpan: (edge: "start" | "end") => void) => Promise<Sample>): Promise<ThreadSample> {
  let start: ReturnType<typeof threadTimes>;
  let end: ReturnType<typeof threadTimes>;
  const sample = await run((edge) => (edge === "start" ? (start = threadTimes()) : (end = threadTimes())));
  return start && end ? { ...sample, onCpu: end.onCpu - start.onCpu, queued: end.queued - start.queued } : sample;
}

/** The adapter's writes and fsyncs made no-ops (what the fs run costs without its I/O: the adapter's code alone). */
const NO_IO: Partial<FsOps> = {
  write: async () => undefined,
  fsync: async () => undefined,
  fsyncDir: async () => undefined,
};

async function runFs(
  turns: number,
  capture?: Capture | "no-io",
  onSpan?: (edge: "start" | "end") => void,
): Promise<Sample> {
  let recording = false;
  const fsOps =
    capture === "no-io" ? { fsOps: NO_IO } : capture ? { fsOps: capturingOps(capture, () => recording) } : {};
  const stores = await fsStores({ dir: await tempDir("overhead-fs"), ...fsOps });
  try {
    // Only the timed span is captured: opening and closing the stores (their checkpoints) are outside it.
    return await runJournaled(turns, stores, undefined, (edge) => {
      recording = edge === "start";
      onSpan?.(edge);
    });
  } finally {
    await stores.close();
  }
}

/**
 * The captured operations done bare: the same sizes at the same offsets, the same fsyncs and renames, in
 * order, on fresh files in directories standing for the journal's (a directory fsync follows the same
 * entries changing in it). Files and directories are created outside the timed span.
 */
async function runBare(
  { ops, dirOf }: Capture,
  pauseMs = 0,
  onSpan?: (edge: "start" | "end") => void,
): Promise<Sample> {
  const root = await tempDir("overhead-bare");
  const handles = new Map<number, FileHandle>();
  const dirPath = (dir: number) => join(root, `d${dir}`);
  const filePath = (file: number) => join(dirPath(dirOf.get(file)!), `f${file}`);
  for (const dir of new Set([...dirOf.values(), ...ops.flatMap((o) => (o.op === "fsyncDir" ? [o.dir] : []))]))
    await mkdir(dirPath(dir), { recursive: true });
  const largest = Math.max(1, ...ops.map((o) => (o.op === "write" ? o.size : 0)));
  const buffer = new Uint8Array(largest).fill(0x61);
  for (const o of ops) {
    if ((o.op === "write" || o.op === "fsync") && !handles.has(o.file))
      handles.set(o.file, await open(filePath(o.file), "w+"));
  }
  let paused = 0;
  onSpan?.("start");
  const end = span();
  for (const o of ops) {
    if (pauseMs > 0 && o.op === "write") paused += spin(pauseMs);
    if (o.op === "write") await nodeFsOps.write(handles.get(o.file)!, buffer.subarray(0, o.size), o.position, "");
    else if (o.op === "fsync") await handles.get(o.file)!.sync();
    else if (o.op === "fsyncDir") await nodeFsOps.fsyncDir(dirPath(o.dir));
    else if (handles.has(o.from)) await rename(filePath(o.from), filePath(o.to));
  }
  const sample = end();
  onSpan?.("end");
  for (const handle of handles.values()) await handle.close();
  // The pauses are the run's CPU, which the memory run already counts: only the I/O is the floor's.
  return {
    wall: sample.wall - paused,
    cpu: Math.max(0, sample.cpu - paused),
    busy: Math.max(0, (sample.busy ?? 0) - paused),
  };
}

/** Keeps the CPU busy for `ms` (as a macrostep's work does between two durable writes); returns the milliseconds spun. */
function spin(ms: number): number {
  const start = performance.now();
  while (performance.now() - start < ms);
  return performance.now() - start;
}

export async function measureOverheadFs(options: BenchOptions): Promise<Section> {
  const turns = options.compareTurns;
  const capture: Capture = { ops: [], dirOf: new Map() };
  await runFs(turns, capture);
  const { ops } = capture;
  const count = (op: DiskOp["op"]) => ops.filter((o) => o.op === op).length;
  const written = ops.reduce((sum, o) => sum + (o.op === "write" ? o.size : 0), 0);
  // The paced floor's pause before each write: the memory run's time spread over the writes the fs run does
  // (its CPU between two durable points), from the latest memory run of the interleaving (a first one before it).
  const writes = Math.max(1, count("write"));
  let lastMemoryMs = (await runJournaled(turns, memoryStores())).wall;
  const pauses: number[] = [];
  const samples = await interleave(
    {
      memory: async () => {
        const sample = await withThread((onSpan) => runJournaled(turns, memoryStores(), undefined, onSpan));
        lastMemoryMs = sample.wall;
        return sample;
      },
      fs: () => withThread((onSpan) => runFs(turns, undefined, onSpan)),
      fsNoIo: () => withThread((onSpan) => runFs(turns, "no-io", onSpan)),
      bare: () => withThread((onSpan) => runBare(capture, 0, onSpan)),
      paced: () => {
        const pause = lastMemoryMs / writes;
        pauses.push(pause);
        return runBare(capture, pause);
      },
    },
    // In-process variants (no fresh process each): the larger count, as measurement 3 uses. The fs run waits on
    // the disk a few hundred times and its floor is measured apart from it, so 7 rounds left the ratio at the
    // mercy of a few slow fsyncs on a shared machine (1.17x to 1.54x of the same code).
    { reps: options.inProcessReps, warmup: options.warmup },
  );
  const [memory, fs, bare, paced, fsNoIo] = [
    medianSample(samples.memory!),
    medianSample(samples.fs!),
    medianSample(samples.bare!),
    medianSample(samples.paced!),
    medianSample(samples.fsNoIo!),
  ];
  const pacedFloor = { wall: memory.wall + paced.wall, cpu: memory.cpu + paced.cpu };
  const floor = { wall: memory.wall + bare.wall, cpu: memory.cpu + bare.cpu };
  const overFloor = { wall: fs.wall / floor.wall, cpu: fs.cpu / floor.cpu };
  // The same ratio round by round (each round runs every variant back to back), for how much it moves.
  const perRound = samples
    .fs!.map((f, i) => f.wall / (samples.memory![i]!.wall + samples.bare![i]!.wall))
    .sort((a, b) => a - b);
  const beyond = fs.wall - floor.wall;
  // The main thread per variant, medians: event loop busy, and (Linux) time on a CPU and waiting for one.
  const of = (name: string, field: "busy" | "onCpu" | "queued") =>
    median(samples[name]!.map((sample) => (sample as ThreadSample)[field] ?? Number.NaN));
  const [fsBusy, fsNoIoBusy, bareBusy] = [of("fs", "busy"), of("fsNoIo", "busy"), of("bare", "busy")];
  const slower = fsBusy - fsNoIoBusy - bareBusy;
  const msOr = (value: number) => (Number.isNaN(value) ? "-" : `${value.toFixed(1)} ms`);
  const busyRow = (label: string, name: string) => [
    label,
    msOr(of(name, "busy")),
    msOr(Math.max(0, medianSample(samples[name]!).wall - of(name, "busy"))),
    msOr(of(name, "onCpu")),
    msOr(of(name, "queued")),
  ];
  const onCpuMore = of("fs", "onCpu") - of("fsNoIo", "onCpu") - of("bare", "onCpu");
  const queuedFs = of("fs", "queued");
  const share = (part: number) => `${Math.round(Math.max(0, Math.min(1, part / Math.max(1e-9, beyond))) * 100)}%`;
  const ms = (s: Sample) => `${s.wall.toFixed(1)} ms (CPU ${s.cpu.toFixed(1)} ms)`;
  return {
    id: "overheadFs",
    title: "3b. Journaling on fs vs its durability floor",
    method: [
      `${turns} turns of the harness, claim-check off, journaled on \`fsStores\` (a temp directory) and on \`memoryStores()\`. ` +
        "`bare`: every write (its size and offset), file and directory fsync and rename the fs run asked node:fs for while it was timed (app.start to its result; " +
        "opening and closing the stores are outside it), captured once through the adapter's `fsOps` seam and done again in the same order on fresh files, " +
        "in directories standing for the journal's (so a directory fsync follows the same renames in it), on the same temp directory's disk, with nothing else " +
        "(files and directories created outside the timed span). " +
        `${options.inProcessReps} repetitions, interleaved, medians of wall-clock and of CPU time.`,
    ],
    tables: [
      {
        head: ["variant", "median time", "time / (memory + bare)"],
        rows: [
          ["journaled on memory", ms(memory), ""],
          ["bare writes and fsyncs (the floor of durability)", ms(bare), ""],
          ["memory + bare", ms(floor), ratio(1)],
          ["journaled on fs (the product)", ms(fs), ratios(overFloor)],
          [
            "journaled on fs, its writes and fsyncs made no-ops (the adapter's code without its I/O)",
            ms(fsNoIo),
            ratios({ wall: fsNoIo.wall / memory.wall, cpu: fsNoIo.cpu / memory.cpu }) + " of memory",
          ],
        ],
      },
      {
        caption: `The same floor paced as the run is: before each write the CPU kept busy for the latest memory run's time over its ${count("write")} writes (median ${median(pauses).toFixed(2)} ms), the pauses then taken out of the time; what the same I/O costs when it waits on the run's computation instead of following the last operation at once`,
        head: ["variant", "median time", "bare I/O per write (with its fsync)", "time / (memory + paced bare)"],
        rows: [
          ["bare, back to back (the floor above)", ms(bare), `${(bare.wall / writes).toFixed(3)} ms`, ""],
          ["bare, paced as the run (pauses taken out)", ms(paced), `${(paced.wall / writes).toFixed(3)} ms`, ""],
          [
            "journaled on fs",
            ms(fs),
            `${((fs.wall - memory.wall) / writes).toFixed(3)} ms (fs - memory)`,
            ratios({ wall: fs.wall / pacedFloor.wall, cpu: fs.cpu / pacedFloor.cpu }),
          ],
        ],
      },
      {
        caption:
          "The main thread over the same spans: how long its event loop was busy (running JavaScript, I/O callbacks included) and idle (waiting on the disk), from `performance.eventLoopUtilization`; and how long the thread was on a CPU and waited for one, from the kernel (`/proc/thread-self/schedstat`, Linux); medians",
        head: ["variant", "main thread busy", "idle", "main thread on a CPU", "waiting for a CPU"],
        rows: [
          busyRow("journaled on memory", "memory"),
          busyRow("journaled on fs, writes and fsyncs made no-ops", "fsNoIo"),
          busyRow("bare writes and fsyncs", "bare"),
          busyRow("journaled on fs", "fs"),
        ],
      },
      {
        caption: "What the fs run asked the disk for while timed (captured from one run)",
        head: ["writes", "bytes written", "file fsyncs", "directory fsyncs", "renames"],
        rows: [[count("write"), bytes(written), count("fsync"), count("fsyncDir"), count("rename")]],
      },
    ],
    goals: [
      {
        goal: `journaled run on fs within ${GOAL}x of the memory run plus its durability floor (${turns} turns)`,
        met: overFloor.wall <= GOAL,
        detail: ratios(overFloor),
      },
    ],
    notes: [
      paced.wall > bare.wall
        ? `The floor's own I/O is slower when it waits on computation: paced as the run is, the same writes and fsyncs take ${ratio(paced.wall / bare.wall)} their back-to-back time (an idle disk queue and thread-pool worker wake up for each). So of what the fs run costs beyond memory + bare, ${share(paced.wall - bare.wall)} is this pacing, which no adapter can avoid while it writes ahead of every macrostep; the goal is still judged against the back-to-back floor.`
        : `The floor's own I/O is not slower when it waits on computation in this run: paced as the run is, the same writes and fsyncs take ${ratio(paced.wall / bare.wall)} their back-to-back time.`,
      `The adapter's own code: with its writes and fsyncs made no-ops the fs run takes ${ratio(fsNoIo.wall / memory.wall)} the memory run's time, ${share(fsNoIo.wall - memory.wall)} of what the fs run costs beyond memory + bare. With them real, the same run costs ${fs.wall > fsNoIo.wall + paced.wall ? "more than" : "no more than"} its code and its I/O apart${fs.wall > fsNoIo.wall + paced.wall ? " (the main thread's figures below say where)" : ""}: fs - memory is ${((fs.wall - memory.wall) / writes).toFixed(3)} ms per write against ${(paced.wall / writes).toFixed(3)} ms for the paced floor's I/O.`,
      `The main thread is busy ${fsBusy.toFixed(1)} ms in the fs run, against ${fsNoIoBusy.toFixed(1)} ms in the same run with its writes and fsyncs made no-ops and ${bareBusy.toFixed(1)} ms for the bare floor's own calls and callbacks: ` +
        (slower > 0
          ? `${slower.toFixed(1)} ms more (${(slower / writes).toFixed(3)} ms per write, ${share(slower)} of what the fs run costs beyond memory + bare) is the same work taking longer on the same thread when every macrostep starts after a wait on the disk, not more work: the adapter does the same with its I/O made no-ops.`
          : "no busier than the two apart in this run.") +
        (Number.isNaN(onCpuMore) || onCpuMore <= 0
          ? ""
          : ` It was on a CPU ${onCpuMore.toFixed(1)} ms longer than with no-op I/O and the bare floor's own calls together, and waited ${queuedFs.toFixed(1)} ms in all for one (/proc/thread-self/schedstat): ` +
            (queuedFs <= QUEUED_SHARE * onCpuMore
              ? `under ${QUEUED_SHARE * 100}% of that excess, so other threads did not take its CPU: the same work, with the kernel's part of each wake-up (epoll, the thread pool's hand-offs), costs more CPU on a thread that slept on the disk before it (its caches and predictors cold; on a virtual machine its core may have run another guest meanwhile).`
              : `${QUEUED_SHARE * 100}% or more of that excess, so other threads taking its CPU is part of it in this run.`)),
      `Round by round, fs / (memory + bare) ranged ${perRound[0]!.toFixed(2)}x to ${perRound.at(-1)!.toFixed(2)}x (median ${perRound[perRound.length >> 1]!.toFixed(2)}x).`,
    ],
    raw: {
      samples,
      ops: {
        writes: count("write"),
        bytes: written,
        fsyncs: count("fsync"),
        dirFsyncs: count("fsyncDir"),
        renames: count("rename"),
      },
    },
  };
}
