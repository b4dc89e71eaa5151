// Measurement 3b: journaling on fs against its physical floor. The overhead run (measurement 3) on
// fsStores, beside the same run on memory and beside "bare": the writes and fsyncs that run did (captured
// through the fs adapter's fsOps seam: every write's size and offset, every file and directory fsync),
// done again bare, in order, on the same disk, with no runtime, no framing and no encoding. What the fs
// run costs beyond memory + bare is what the adapter and the runtime add on top of durability itself.
import { mkdir, open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { fsStores } from "../adapters/fs/index.js";
import { nodeFsOps, type FsOps } from "../adapters/fs/fsOps.js";
import { memoryStores } from "../stores/memory.js";
import { runJournaled } from "./overhead.js";
import { interleave, medianSample, span, type Sample } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { bytes, ratio, ratios, type Section } from "./report.js";
import { tempDir } from "./stores.js";

const GOAL = 1.25;

/** One durable operation the fs run did, as the adapter asked node:fs for it. */
type DiskOp = { op: "write"; file: number; size: number; position: number } | { op: "fsync"; file: number } | { op: "fsyncDir"; dir: number } | { op: "rename" };

/** Records every durable operation while forwarding it to node:fs; files and directories by first-seen index. */
function capturingOps(ops: DiskOp[]): Partial<FsOps> {
  const files = new Map<string, number>();
  const dirs = new Map<string, number>();
  const idOf = (map: Map<string, number>, path: string) => map.get(path) ?? map.set(path, map.size).get(path)!;
  return {
    write: (handle, data, position, path) => (ops.push({ op: "write", file: idOf(files, path), size: data.length, position }), nodeFsOps.write(handle, data, position, path)),
    fsync: (handle, path) => (ops.push({ op: "fsync", file: idOf(files, path) }), nodeFsOps.fsync(handle, path)),
    fsyncDir: (path) => (ops.push({ op: "fsyncDir", dir: idOf(dirs, path) }), nodeFsOps.fsyncDir(path)),
    rename: (from, to) => (ops.push({ op: "rename" }), nodeFsOps.rename(from, to)),
  };
}

async function runFs(turns: number, ops?: DiskOp[]): Promise<Sample> {
  const stores = await fsStores({ dir: await tempDir("overhead-fs"), ...(ops ? { fsOps: capturingOps(ops) } : {}) });
  try {
    return await runJournaled(turns, stores);
  } finally {
    await stores.close();
  }
}

/** The captured operations done bare: the same sizes at the same offsets, the same fsyncs, in order, on fresh files. */
async function runBare(ops: readonly DiskOp[]): Promise<Sample> {
  const root = await tempDir("overhead-bare");
  const handles = new Map<number, FileHandle>();
  const dirs = new Map<number, string>();
  const largest = Math.max(1, ...ops.map((o) => (o.op === "write" ? o.size : 0)));
  const buffer = new Uint8Array(largest).fill(0x61);
  // Files and directories are created outside the timed span: the floor is the writes and the syncs.
  for (const o of ops) {
    if (o.op === "write" || o.op === "fsync") {
      if (!handles.has(o.file)) handles.set(o.file, await open(join(root, `f${o.file}`), "w+"));
    } else if (o.op === "fsyncDir" && !dirs.has(o.dir)) {
      const dir = join(root, `d${o.dir}`);
      await mkdir(dir, { recursive: true });
      dirs.set(o.dir, dir);
    }
  }
  const end = span();
  for (const o of ops) {
    if (o.op === "write") await nodeFsOps.write(handles.get(o.file)!, buffer.subarray(0, o.size), o.position, "");
    else if (o.op === "fsync") await handles.get(o.file)!.sync();
    else if (o.op === "fsyncDir") await nodeFsOps.fsyncDir(dirs.get(o.dir)!);
  }
  const sample = end();
  for (const handle of handles.values()) await handle.close();
  return sample;
}

export async function measureOverheadFs(options: BenchOptions): Promise<Section> {
  const turns = options.compareTurns;
  const ops: DiskOp[] = [];
  await runFs(turns, ops);
  const count = (op: DiskOp["op"]) => ops.filter((o) => o.op === op).length;
  const written = ops.reduce((sum, o) => sum + (o.op === "write" ? o.size : 0), 0);
  const samples = await interleave(
    {
      memory: () => runJournaled(turns, memoryStores()),
      fs: () => runFs(turns),
      bare: () => runBare(ops),
    },
    { reps: options.reps, warmup: options.warmup },
  );
  const [memory, fs, bare] = [medianSample(samples.memory!), medianSample(samples.fs!), medianSample(samples.bare!)];
  const floor = { wall: memory.wall + bare.wall, cpu: memory.cpu + bare.cpu };
  const overFloor = { wall: fs.wall / floor.wall, cpu: fs.cpu / floor.cpu };
  const ms = (s: Sample) => `${s.wall.toFixed(1)} ms (CPU ${s.cpu.toFixed(1)} ms)`;
  return {
    id: "overheadFs",
    title: "3b. Journaling on fs vs its durability floor",
    method: [
      `${turns} turns of the harness, claim-check off, journaled on \`fsStores\` (a temp directory) and on \`memoryStores()\`. ` +
        "`bare`: every write (its size and offset) and every file and directory fsync the fs run asked node:fs for, captured once through the adapter's `fsOps` seam " +
        "and done again in the same order on fresh files in the same temp directory's disk, with nothing else (files opened outside the timed span; renames not repeated). " +
        `${options.reps} repetitions, interleaved, medians of wall-clock and of CPU time.`,
    ],
    tables: [
      {
        head: ["variant", "median time", "time / (memory + bare)"],
        rows: [
          ["journaled on memory", ms(memory), ""],
          ["bare writes and fsyncs (the floor of durability)", ms(bare), ""],
          ["memory + bare", ms(floor), ratio(1)],
          ["journaled on fs (the product)", ms(fs), ratios(overFloor)],
        ],
      },
      {
        caption: "What the fs run asked the disk for (captured from one run)",
        head: ["writes", "bytes written", "file fsyncs", "directory fsyncs", "renames"],
        rows: [[count("write"), bytes(written), count("fsync"), count("fsyncDir"), count("rename")]],
      },
    ],
    goals: [{ goal: `journaled run on fs within ${GOAL}x of the memory run plus its durability floor (${turns} turns)`, met: overFloor.wall <= GOAL, detail: ratios(overFloor) }],
    notes: [],
    raw: { samples, ops: { writes: count("write"), bytes: written, fsyncs: count("fsync"), dirFsyncs: count("fsyncDir"), renames: count("rename") } },
  };
}
