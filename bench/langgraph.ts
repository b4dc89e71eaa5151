// Measurement 5: side by side with LangGraph.js. The same scripted agent (model script, tool outputs) as a
// StateGraph with MemorySaver and with SqliteSaver, against loomwork on memory and on fs: bytes persisted,
// time per turn, time to resume from the checkpointer. Both LangGraph state shapes are measured: the
// documented MessagesAnnotation and the experimental MessagesDeltaValue (a DeltaChannel, LangGraph 1.7).
import { MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { memoryStores } from "../stores/memory.js";
import { EXECUTION_ID, resumeInterrupted, runAgent, runInterrupted, stallTurn } from "./agent.js";
import { buildGraph, invokeArgs, memorySaverBytes, type LangGraphState } from "./langgraphAgent.js";
import { interleave, ratioOf, span, type Sample } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { bytes, ratio, ratios, type Goal, type Section } from "./report.js";
import { runChild } from "./spawn.js";
import { diskUsage, snapshotBytes } from "./storeBytes.js";
import { openStores, tempDir } from "./stores.js";

const STATES: LangGraphState[] = ["messages", "delta"];
/**
 * `sqlite`: SqliteSaver as shipped (WAL; better-sqlite3 builds SQLite with WAL synchronous=NORMAL, so a
 * commit is not fsync'd). `sqliteFull`: the same with synchronous=FULL, durable per checkpoint as our fs
 * journal is per macrostep.
 */
type Checkpointer = "memory" | "sqlite" | "sqliteFull";
const STORES: Checkpointer[] = ["memory", "sqlite", "sqliteFull"];
const STORE_LABEL: Record<Checkpointer, string> = {
  memory: "MemorySaver vs loomwork on memory",
  sqlite: "SqliteSaver as shipped (WAL, synchronous=NORMAL: commits not fsync'd) vs loomwork on fs (every macrostep fsync'd)",
  sqliteFull: "SqliteSaver with synchronous=FULL (every commit fsync'd) vs loomwork on fs",
};
const LABEL: Record<LangGraphState, string> = { messages: "MessagesAnnotation", delta: "MessagesDeltaValue (experimental)" };
const BYTES_GOAL = 20;

/** Bytes of a SQLite database and its WAL / shared-memory files. */
async function sqliteBytes(file: string): Promise<number> {
  let total = 0;
  for (const f of [file, `${file}-wal`, `${file}-shm`]) total += await stat(f).then((s) => s.size, () => 0);
  return total;
}

let files = 0;
async function sqliteFile(): Promise<string> {
  return join(await tempDir("sqlite"), `checkpoints-${++files}.sqlite`);
}

type SaverBytes = ReturnType<typeof memorySaverBytes>;
const breakdown: Partial<Record<LangGraphState, SaverBytes>> = {};

async function runLangGraph(turns: number, state: LangGraphState, store: Checkpointer): Promise<{ sample: Sample; bytes: number }> {
  const file = store === "memory" ? "" : await sqliteFile();
  const checkpointer = store === "memory" ? new MemorySaver() : SqliteSaver.fromConnString(file);
  if (store === "sqliteFull") (checkpointer as SqliteSaver).db.pragma("synchronous = FULL");
  const graph = buildGraph({ turns, state, checkpointer });
  const { input, config } = invokeArgs(turns);
  const end = span();
  await graph.invoke(input, config);
  const sample = end();
  if (checkpointer instanceof MemorySaver) {
    breakdown[state] = memorySaverBytes(checkpointer);
    return { sample, bytes: breakdown[state].total };
  }
  (checkpointer as SqliteSaver).db.close();
  return { sample, bytes: await sqliteBytes(file) };
}

/** Runs the graph until the last tool call hangs, then aborts it: the checkpointer holds every turn but that one. */
async function interruptLangGraph(turns: number, state: LangGraphState, checkpointer: MemorySaver | SqliteSaver): Promise<void> {
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const graph = buildGraph({ turns, state, checkpointer, stallAt: { turn: stallTurn(turns), reached: reach } });
  const abort = new AbortController();
  const { input, config } = invokeArgs(turns, abort.signal);
  const run = graph.invoke(input, config).catch(() => undefined);
  await reached;
  await new Promise((resolve) => setTimeout(resolve, 50)); // durability "async": let the last checkpoint land
  abort.abort();
  await run;
}

async function resumeLangGraphInProcess(turns: number, state: LangGraphState, checkpointer: MemorySaver): Promise<Sample> {
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const end = span();
  const graph = buildGraph({ turns, state, checkpointer, stallAt: { turn: stallTurn(turns), reached: reach } });
  const abort = new AbortController();
  const run = graph.invoke(null, invokeArgs(turns, abort.signal).config).catch(() => undefined);
  await reached;
  const sample = end();
  abort.abort();
  await run;
  return sample;
}

export async function measureLangGraph(options: BenchOptions): Promise<Section> {
  const turns = options.compareTurns;
  const persisted: Record<string, number> = {};
  const keep = (name: string, sample: Sample, size: number) => ((persisted[name] = size), sample);

  // Time per turn and bytes persisted: every variant runs the whole agent, interleaved.
  const run = await interleave(
    {
      loomMemory: async () => {
        const stores = memoryStores();
        const { app, sample } = await runAgent(stores, turns, "off");
        const size = (await app.stats(EXECUTION_ID)).logBytes + (await snapshotBytes(stores, EXECUTION_ID)).bytes;
        await app.close();
        return keep("loomMemory", sample, size);
      },
      loomFs: async () => {
        const bench = await openStores("fs");
        const { app, sample } = await runAgent(bench.stores, turns, "off");
        await app.close();
        await bench.close();
        return keep("loomFs", sample, bench.kind === "fs" ? (await diskUsage(bench.dir, ["content"])).apparent : 0);
      },
      ...Object.fromEntries(
        STATES.flatMap((state) => STORES.map((store) => [`${state}:${store}`, async () => ((r) => keep(`${state}:${store}`, r.sample, r.bytes))(await runLangGraph(turns, state, store))])),
      ),
    },
    { reps: options.langGraphReps, warmup: options.warmup },
  );

  // Resume: memory in-process against MemorySaver; fs against SQLite, each in a fresh process.
  const loomMemory = memoryStores();
  await runInterrupted(loomMemory, turns);
  const savers = Object.fromEntries(STATES.map((s) => [s, new MemorySaver()])) as Record<LangGraphState, MemorySaver>;
  const sqlite: Record<string, string> = {};
  for (const state of STATES) {
    await interruptLangGraph(turns, state, savers[state]);
    sqlite[state] = await sqliteFile();
    const saver = SqliteSaver.fromConnString(sqlite[state]!);
    await interruptLangGraph(turns, state, saver);
    saver.db.close();
  }
  const fs = await openStores("fs");
  await runInterrupted(fs.stores, turns);
  await fs.close();
  const dir = fs.kind === "fs" ? fs.dir : "";
  const resume = await interleave(
    {
      loomMemory: async () => {
        const end = span();
        const { app, reached } = await resumeInterrupted(loomMemory, turns);
        await reached;
        const sample = end();
        await app.close();
        return sample;
      },
      loomFs: async () => ((r) => ({ wall: r.toToolMs as number, cpu: r.toToolCpuMs as number }))(await runChild("resumeFs", { dir, turns })),
      ...Object.fromEntries(
        STATES.flatMap((state) => [
          [`${state}:memory`, () => resumeLangGraphInProcess(turns, state, savers[state])],
          [`${state}:sqlite`, async () => ((r) => ({ wall: r.ms, cpu: Number(r.cpuMs) }))(await runChild("resumeLangGraph", { file: sqlite[state], turns, state }))],
        ]),
      ),
    },
    { reps: options.langGraphReps, warmup: options.warmup },
  );


  const rows = STATES.flatMap((state) =>
    STORES.map((store) => {
      const lg = `${state}:${store}`;
      const loom = store === "memory" ? "loomMemory" : "loomFs";
      // Resuming reads the same file whatever its synchronous setting: one resume figure per file format.
      const resumed = `${state}:${store === "sqliteFull" ? "sqlite" : store}`;
      return {
        label: `${LABEL[state]}, ${STORE_LABEL[store]}`,
        lgBytes: persisted[lg]!,
        loomBytes: persisted[loom]!,
        time: ratioOf(run[lg]!, run[loom]!),
        resume: ratioOf(resume[resumed]!, resume[loom]!),
      };
    }),
  );
  const goals: Goal[] = rows.flatMap((r) => [
    { goal: `at least ${BYTES_GOAL}x fewer bytes than LangGraph: ${r.label}`, met: r.lgBytes / r.loomBytes >= BYTES_GOAL, detail: `${ratio(r.lgBytes / r.loomBytes, 1)} fewer` },
    { goal: `less time per turn than LangGraph: ${r.label}`, met: r.time.wall > 1, detail: `LangGraph takes ${ratios(r.time)} loomwork's time` },
  ]);
  return {
    id: "langgraph",
    title: "5. Side by side with LangGraph.js",
    method: [
      `@langchain/langgraph 1.7.3, @langchain/langgraph-checkpoint-sqlite 1.0.4 (better-sqlite3 12, WAL). The same ${turns}-turn agent: an "agent" node answering from \`workloadReply\` and a "tools" node returning \`toolOutput(42, turn)\` as a ToolMessage, ` +
        "with LangGraph's default durability (\"async\": a checkpoint is written while the next step runs). loomwork: the harness with claim-check off, whose bytes are the log plus the stored snapshot (memory) or the journal directory (fs). " +
        `Resume: both systems stopped at the last tool call; timed from opening the store to that tool running again (memory in-process, fs / SQLite in fresh \`node --import tsx\` processes). ${options.langGraphReps} repetitions, interleaved, medians of wall-clock and CPU time. The CPU time of a fresh process is the child's own.`,
    ],
    tables: [
      {
        head: ["LangGraph state, checkpointer vs loomwork store", "LangGraph bytes", "loomwork bytes", "LangGraph / loomwork bytes", "time per turn, LangGraph / loomwork (wall; CPU)", "resume, LangGraph / loomwork (wall; CPU)"],
        rows: rows.map((r) => [r.label, bytes(r.lgBytes), bytes(r.loomBytes), ratio(r.lgBytes / r.loomBytes, 1), ratios(r.time), ratios(r.resume)]),
      },
    ],
    goals,
    notes: [
      `What a MemorySaver holds (${turns} turns): ${STATES.filter((s) => breakdown[s])
        .map((s) => `${LABEL[s]}: ${breakdown[s]!.count} checkpoints of ${bytes(breakdown[s]!.checkpoints)}, their metadata ${bytes(breakdown[s]!.metadata)}, pending writes (each node's output) ${bytes(breakdown[s]!.writes)}`)
        .join("; ")}. loomwork holds one copy of each step's output (the log) and one folded state (the latest snapshot).`,
      "MessagesAnnotation re-serializes the whole message list into every checkpoint (two per turn), so LangGraph's bytes grow with the square of the turns; MessagesDeltaValue stores per-step deltas plus periodic snapshots and grows linearly, like our log.",
      "SQLite bytes are the database file plus its -wal and -shm files after the saver's connection is closed.",
      "The resume column of the synchronous=FULL rows repeats the SqliteSaver resume: resuming reads the same file either way.",
      "Durability differs: loomwork's fs journal resolves an append only once it is fsync'd (write-ahead, before the machine acts on it); SqliteSaver as shipped commits each checkpoint without an fsync " +
        "(better-sqlite3 builds SQLite with WAL synchronous=NORMAL) and LangGraph's default durability writes it while the next step runs. The synchronous=FULL rows are the like-for-like durable comparison.",
    ],
    raw: { persisted, run, resume },
  };
}
