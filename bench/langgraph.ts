// Measurement 5: side by side with LangGraph.js. The same scripted agent (model script, tool outputs) as a
// StateGraph with MemorySaver and with SqliteSaver, against loomwork on memory and on fs: bytes persisted,
// time per turn, time to resume from the checkpointer. Both LangGraph state shapes are measured: the
// documented MessagesAnnotation and the experimental MessagesDeltaValue (a DeltaChannel, LangGraph 1.7).
import { MemorySaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { postgresStores } from "../adapters/postgres/index.js";
import { dropSchema, freshSchema } from "../spec/postgres/server.js";
import { memoryStores } from "../stores/memory.js";
import { EXECUTION_ID, resumeInterrupted, runAgent, runInterrupted, stallTurn } from "./agent.js";
import { buildGraph, invokeArgs, memorySaverBytes, type LangGraphState } from "./langgraphAgent.js";
import { interleave, medianSample, ratioOf, span, type Sample } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { bytes, ratio, ratios, type Goal, type Section, type Table } from "./report.js";
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
  sqlite:
    "SqliteSaver as shipped (WAL, synchronous=NORMAL: commits not fsync'd) vs loomwork on fs (every macrostep fsync'd)",
  sqliteFull: "SqliteSaver with synchronous=FULL (every commit fsync'd) vs loomwork on fs",
};
const LABEL: Record<LangGraphState, string> = {
  messages: "MessagesAnnotation",
  delta: "MessagesDeltaValue (experimental)",
};
const BYTES_GOAL = 20;

/** Bytes of a SQLite database and its WAL / shared-memory files. */
async function sqliteBytes(file: string): Promise<number> {
  let total = 0;
  for (const f of [file, `${file}-wal`, `${file}-shm`])
    total += await stat(f).then(
      (s) => s.size,
      () => 0,
    );
  return total;
}

let files = 0;
async function sqliteFile(): Promise<string> {
  return join(await tempDir("sqlite"), `checkpoints-${++files}.sqlite`);
}

type SaverBytes = ReturnType<typeof memorySaverBytes>;
const breakdown: Partial<Record<LangGraphState, SaverBytes>> = {};

async function runLangGraph(
  turns: number,
  state: LangGraphState,
  store: Checkpointer,
): Promise<{ sample: Sample; bytes: number }> {
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
async function interruptLangGraph(
  turns: number,
  state: LangGraphState,
  checkpointer: MemorySaver | SqliteSaver,
): Promise<void> {
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

async function resumeLangGraphInProcess(
  turns: number,
  state: LangGraphState,
  checkpointer: MemorySaver,
): Promise<Sample> {
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
        STATES.flatMap((state) =>
          STORES.map((store) => [
            `${state}:${store}`,
            async () => ((r) => keep(`${state}:${store}`, r.sample, r.bytes))(await runLangGraph(turns, state, store)),
          ]),
        ),
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
      loomFs: async () =>
        ((r) => ({ wall: r.toToolMs as number, cpu: r.toToolCpuMs as number }))(
          await runChild("resumeFs", { dir, turns }),
        ),
      ...Object.fromEntries(
        STATES.flatMap((state) => [
          [`${state}:memory`, () => resumeLangGraphInProcess(turns, state, savers[state])],
          [
            `${state}:sqlite`,
            async () =>
              ((r) => ({ wall: r.ms, cpu: Number(r.cpuMs) }))(
                await runChild("resumeLangGraph", { file: sqlite[state], turns, state }),
              ),
          ],
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
    {
      goal: `at least ${BYTES_GOAL}x fewer bytes than LangGraph: ${r.label}`,
      met: r.lgBytes / r.loomBytes >= BYTES_GOAL,
      detail: `${ratio(r.lgBytes / r.loomBytes, 1)} fewer`,
    },
    {
      goal: `less time per turn than LangGraph: ${r.label}`,
      met: r.time.wall > 1,
      detail: `LangGraph takes ${ratios(r.time)} loomwork's time`,
    },
  ]);
  return {
    id: "langgraph",
    title: "5. Side by side with LangGraph.js",
    method: [
      `@langchain/langgraph 1.7.3, @langchain/langgraph-checkpoint-sqlite 1.0.4 (better-sqlite3 12, WAL). The same ${turns}-turn agent: an "agent" node answering from \`workloadReply\` and a "tools" node returning \`toolOutput(42, turn)\` as a ToolMessage, ` +
        'with LangGraph\'s default durability ("async": a checkpoint is written while the next step runs). loomwork: the harness with claim-check off, whose bytes are the log plus the stored snapshot (memory) or the journal directory (fs). ' +
        `Resume: both systems stopped at the last tool call; timed from opening the store to that tool running again (memory in-process, fs / SQLite in fresh \`node --import tsx\` processes). ${options.langGraphReps} repetitions, interleaved, medians of wall-clock and CPU time. The CPU time of a fresh process is the child's own.`,
    ],
    tables: [
      {
        head: [
          "LangGraph state, checkpointer vs loomwork store",
          "LangGraph bytes",
          "loomwork bytes",
          "LangGraph / loomwork bytes",
          "time per turn, LangGraph / loomwork (wall; CPU)",
          "resume, LangGraph / loomwork (wall; CPU)",
        ],
        rows: rows.map((r) => [
          r.label,
          bytes(r.lgBytes),
          bytes(r.loomBytes),
          ratio(r.lgBytes / r.loomBytes, 1),
          ratios(r.time),
          ratios(r.resume),
        ]),
      },
    ],
    goals,
    notes: [
      `What a MemorySaver holds (${turns} turns): ${STATES.filter((s) => breakdown[s])
        .map(
          (s) =>
            `${LABEL[s]}: ${breakdown[s]!.count} checkpoints of ${bytes(breakdown[s]!.checkpoints)}, their metadata ${bytes(breakdown[s]!.metadata)}, pending writes (each node's output) ${bytes(breakdown[s]!.writes)}`,
        )
        .join(
          "; ",
        )}. loomwork holds one copy of each step's output (the log) and one folded state (the latest snapshot).`,
      "MessagesAnnotation re-serializes the whole message list into every checkpoint (two per turn), so LangGraph's bytes grow with the square of the turns; MessagesDeltaValue stores per-step deltas plus periodic snapshots and grows linearly, like our log.",
      "SQLite bytes are the database file plus its -wal and -shm files after the saver's connection is closed.",
      "The resume column of the synchronous=FULL rows repeats the SqliteSaver resume: resuming reads the same file either way.",
      "Durability differs: loomwork's fs journal resolves an append only once it is fsync'd (write-ahead, before the machine acts on it); SqliteSaver as shipped commits each checkpoint without an fsync " +
        "(better-sqlite3 builds SQLite with WAL synchronous=NORMAL) and LangGraph's default durability writes it while the next step runs. The synchronous=FULL rows are the like-for-like durable comparison.",
    ],
    raw: { persisted, run, resume },
  };
}

/** Bytes of a schema's tables as PostgreSQL stores them: heap, TOAST and indexes (`pg_total_relation_size`), and the rows' own bytes (`pg_column_size` of each row, TOAST-compressed values as stored). */
export interface PgBytes {
  total: number;
  rows: number;
}

/** Measures the tables of `schema` (every relation of kind table in it). */
export async function pgSchemaBytes(client: pg.ClientBase, schema: string): Promise<PgBytes> {
  const tables = (
    await client.query<{ name: string }>(
      "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'",
      [schema],
    )
  ).rows;
  let total = 0;
  let rows = 0;
  for (const { name } of tables) {
    const q = `"${schema}"."${name}"`;
    total += Number((await client.query<{ n: string }>(`SELECT pg_total_relation_size('${q}') AS n`)).rows[0]!.n);
    rows += Number(
      (await client.query<{ n: string | null }>(`SELECT sum(pg_column_size(t.*)) AS n FROM ${q} t`)).rows[0]!.n ?? 0,
    );
  }
  return { total, rows };
}

const minus = (a: PgBytes, b: PgBytes): PgBytes => ({ total: a.total - b.total, rows: a.rows - b.rows });

/** One run on Postgres: its time and the bytes its schema gained (after minus the empty schema after set-up). */
interface PgRun {
  sample: Sample;
  bytes: PgBytes;
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function runLangGraphPostgres(url: string, turns: number, state: LangGraphState): Promise<PgRun> {
  const schema = freshSchema("lg");
  const saver = PostgresSaver.fromConnString(url, { schema });
  try {
    await saver.setup();
    const empty = await withClient(url, (c) => pgSchemaBytes(c, schema));
    const graph = buildGraph({ turns, state, checkpointer: saver });
    const { input, config } = invokeArgs(turns);
    const end = span();
    await graph.invoke(input, config);
    const sample = end();
    // Writes LangGraph left in flight (durability "async") land before the bytes are read.
    await saver.end();
    await withClient(url, (c) => c.query("VACUUM"));
    return { sample, bytes: minus(await withClient(url, (c) => pgSchemaBytes(c, schema)), empty) };
  } finally {
    await saver.end().catch(() => undefined);
    await dropSchema(url, schema);
  }
}

async function runLoomPostgres(url: string, turns: number): Promise<PgRun> {
  const schema = freshSchema("lw");
  const stores = await postgresStores({ url, schema });
  try {
    const empty = await withClient(url, (c) => pgSchemaBytes(c, schema));
    const { app, sample } = await runAgent(stores, turns, "off");
    await app.close();
    await withClient(url, (c) => c.query("VACUUM"));
    return { sample, bytes: minus(await withClient(url, (c) => pgSchemaBytes(c, schema)), empty) };
  } finally {
    await stores.close();
    await dropSchema(url, schema);
  }
}

/**
 * LangGraph's Postgres checkpointer against loomwork's `postgresStores` on one server (the fleet's, in
 * measurement 8): the same agent as above, both state shapes. Bytes are what each schema gained over its
 * empty tables; time per turn is a ratio of interleaved medians.
 */
export async function measureLangGraphPostgres(
  url: string,
  turns: number,
  reps: number,
): Promise<{ tables: Table[]; goals: Goal[]; notes: string[]; raw: unknown }> {
  const bytesOf: Record<string, PgBytes> = {};
  const keep = (name: string, r: PgRun) => ((bytesOf[name] = r.bytes), r.sample);
  const samples = await interleave(
    {
      loom: async () => keep("loom", await runLoomPostgres(url, turns)),
      ...Object.fromEntries(
        STATES.map((state) => [state, async () => keep(state, await runLangGraphPostgres(url, turns, state))]),
      ),
    },
    { reps, warmup: 0 },
  );
  const loom = bytesOf.loom!;
  const rows = STATES.map((state) => ({
    state,
    lg: bytesOf[state]!,
    time: ratioOf(samples[state]!, samples.loom!),
    perTurn: medianSample(samples[state]!).wall / turns,
  }));
  const loomPerTurn = medianSample(samples.loom!).wall / turns;
  return {
    tables: [
      {
        caption: `LangGraph's Postgres checkpointer vs loomwork's postgresStores, the ${turns}-turn agent, on the same server`,
        head: [
          "LangGraph state",
          "LangGraph bytes (relations)",
          "loomwork bytes (relations)",
          "ratio",
          "LangGraph bytes (rows)",
          "loomwork bytes (rows)",
          "ratio",
          "ms per turn, LangGraph",
          "ms per turn, loomwork",
          "time per turn, LangGraph / loomwork (wall; CPU)",
        ],
        rows: rows.map((r) => [
          LABEL[r.state],
          bytes(r.lg.total),
          bytes(loom.total),
          ratio(r.lg.total / loom.total, 1),
          bytes(r.lg.rows),
          bytes(loom.rows),
          ratio(r.lg.rows / loom.rows, 1),
          r.perTurn.toFixed(2),
          loomPerTurn.toFixed(2),
          ratios(r.time),
        ]),
      },
    ],
    goals: rows.flatMap((r) => [
      {
        goal: `at least ${BYTES_GOAL}x fewer bytes than LangGraph's Postgres checkpointer: ${LABEL[r.state]}`,
        met: r.lg.total / loom.total >= BYTES_GOAL,
        detail: `${ratio(r.lg.total / loom.total, 1)} fewer (relations; rows: ${ratio(r.lg.rows / loom.rows, 1)})`,
      },
    ]),
    notes: [
      `@langchain/langgraph-checkpoint-postgres 1.0.5 (PostgresSaver, its own pg pool) and postgresStores, each in a fresh schema of the same server; ${reps} runs each, interleaved. ` +
        'Bytes: what the schema\'s tables gained over the empty tables after set-up, after a VACUUM. "relations" is `pg_total_relation_size` (heap pages, TOAST, indexes: the disk the schema takes); "rows" is the sum of `pg_column_size` of every row (the tuples\' bytes, values over 2 kB TOAST-compressed as stored). loomwork\'s rows are its records, the catalogue row and the latest snapshot (claim-check off).',
      'PostgresSaver stores each channel\'s new value once per version in checkpoint_blobs: with MessagesAnnotation that is the whole message list at every superstep (quadratic in turns before compression); MessagesDeltaValue writes per-step deltas and grows linearly, like our log. Values over 2 kB are TOAST-compressed (pglz) on both sides, so "rows" is compressed bytes; "relations" adds pages, indexes and free space, which weigh most on a small journal.',
    ],
    raw: { bytes: bytesOf, samples },
  };
}
