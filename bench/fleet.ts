// Measurement 8: the fleet on PostgreSQL. Worker processes (`createWorker`, concurrency 8 each) over one
// local server; this process submits the 10-step flow N times and waits for every result. Executions
// and steps per second, with 1, 2, 4 and 8 workers, each with durability on (PostgreSQL's defaults: every
// commit waits for its WAL flush, as users run it) and off (bench/pgDurability.ts). The server is a
// throwaway cluster of the benchmark's own (spec/postgres/server.ts), or LOOMWORK_PG_URL as it is set. On
// the same server in the same run: DBOS Transact on the same 10-step flow (bench/dbos.ts) and LangGraph's
// Postgres checkpointer on the 200-turn agent (bench/langgraph.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { postgresStores } from "../adapters/postgres/index.js";
import { freshSchema, startPostgres, type PgServer } from "../spec/postgres/server.js";
import pg from "pg";
import { DBOS_VERSION, runDbos } from "./dbos.js";
import { processesCpuMs } from "./fleetCpu.js";
import { dropSchemaOfKilled, killed, startedAll } from "./fleetWorkers.js";
import { FLOW_STEPS, tenStepFlow } from "./fleetFlow.js";
import { measureLangGraphPostgres } from "./langgraph.js";
import type { BenchOptions } from "./options.js";
import { durabilityLabel, durabilitySettings, setDurability, type Durability } from "./pgDurability.js";
import { ratio, type Goal, type Section } from "./report.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CONCURRENCY = 8;
/** How long the server's statistics (pg_stat_database, pg_stat_wal) may lag behind its commits. */
const STATS_LAG_MS = 1100;
/**
 * Executions per run in the default run: at 200 a run of one engine lasted 1.4-5.7 s, short enough for the
 * set-up's commits and the other work on the machine to move a row; 500 keeps the 16 runs near 4 minutes.
 */
const EXECUTIONS = 500;
/** Both engines' poll interval (loomwork's pollMs, DBOS's queue minPollingIntervalMs and waitAll polling). */
const POLL_MS = 50;
/** How far from 1.00x a rate's change with more workers must be before the notes call it more or less throughput. */
const SCALING_NOISE = 0.1;
const ENGINE_LABEL = { loomwork: "loomwork (createWorker)", dbos: "DBOS Transact" } as const;

function startWorker(url: string, schema: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "bench/child/fleetWorker.ts", JSON.stringify({ url, schema, concurrency: CONCURRENCY })],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NODE_NO_WARNINGS: "1" },
    },
  );
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve(child));
    child.on("exit", (code) => reject(new Error(`fleet worker exited with ${code}: ${err.slice(-1500)}`)));
  });
}

async function runFleet(
  url: string,
  workers: number,
  executions: number,
): Promise<{ ms: number; workerCpuMs: number }> {
  const schema = freshSchema("bench");
  const stores = await postgresStores({ url, schema, pollMs: 50 });
  const children: ChildProcess[] = [];
  try {
    // postgresStores above has migrated the schema, so the workers can start together (not timed).
    await startedAll(
      Array.from({ length: workers }, () => startWorker(url, schema)),
      children,
    );
    const cpuAtReady = processesCpuMs(children.map((c) => c.pid));
    const app = createApp(defineConfig({ stores, effects: {} }));
    const ids = Array.from({ length: executions }, (_, i) => `f${i}`);
    const start = performance.now();
    await Promise.all(ids.map((id) => app.submit(tenStepFlow, { executionId: id, input: null })));
    await Promise.all(ids.map((id) => app.result(id)));
    const ms = performance.now() - start;
    const workerCpuMs = processesCpuMs(children.map((c) => c.pid)) - cpuAtReady;
    await app.close();
    return { ms, workerCpuMs };
  } finally {
    await killed(children);
    await stores.close();
    await dropSchemaOfKilled(url, schema);
  }
}

interface ServerCounters {
  /** Transactions committed, read-only ones included (pg_stat_database, every database of the server). */
  commits: number;
  /** Transaction ids assigned: the transactions that wrote, the ones whose commit waits for a WAL flush. */
  writes: number;
  /** WAL flushes (pg_stat_wal.wal_sync: 0 with fsync off); undefined before PostgreSQL 14. */
  walSyncs: number | undefined;
}

/**
 * The server's counters so far. Its statistics lag up to a second (STATS_LAG_MS): read after that pause, which
 * a --quick run skips (its figures are a smoke test, not measurements).
 */
async function serverCounters(url: string, settleMs: number): Promise<ServerCounters> {
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const one = async (sql: string) => Number((await client.query<{ n: string }>(sql)).rows[0]!.n);
    return {
      commits: await one("SELECT sum(xact_commit) AS n FROM pg_stat_database"),
      // The next transaction id, read without taking one.
      writes: await one("SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS n"),
      walSyncs: await one("SELECT wal_sync AS n FROM pg_stat_wal").catch(() => undefined),
    };
  } finally {
    await client.end();
  }
}

type Engine = "loomwork" | "dbos";
interface EngineRun {
  /** The durability mode a fresh connection saw just before the run ("on", "off", or a user's server's settings). */
  durability: string;
  engine: Engine;
  workers: number;
  executions: number;
  ms: number;
  /** CPU of the worker processes and of the submitting process (this one) over the run. */
  workerCpuMs: number;
  submitterCpuMs: number;
  commits: number;
  writes: number;
  walSyncs: number | undefined;
}

/** Runs one engine's variant and the counters that explain it (worker CPU, submitter CPU, server commits). */
async function measured(
  server: PgServer,
  engine: Engine,
  workers: number,
  executions: number,
  expected: string,
  settleMs: number,
): Promise<EngineRun> {
  const url = server.url;
  // Each run starts from a checkpoint (every dirty page written), so neither inherits the other's backlog.
  if (server.owned) await checkpoint(url);
  const durability = durabilityLabel(await durabilitySettings(url));
  if (durability !== expected)
    throw new Error(
      `the ${engine} run of ${workers} workers was to run in durability ${expected}, the server has ${durability}`,
    );
  const before = await serverCounters(url, settleMs);
  const cpu = process.cpuUsage();
  const { ms, workerCpuMs } =
    engine === "loomwork"
      ? await runFleet(url, workers, executions)
      : await runDbos(url, workers, executions, { concurrency: CONCURRENCY, pollMs: POLL_MS });
  const used = process.cpuUsage(cpu);
  const after = await serverCounters(url, settleMs);
  return {
    durability,
    engine,
    workers,
    executions,
    ms,
    workerCpuMs,
    submitterCpuMs: (used.user + used.system) / 1000,
    commits: after.commits - before.commits,
    writes: after.writes - before.writes,
    walSyncs:
      after.walSyncs === undefined || before.walSyncs === undefined ? undefined : after.walSyncs - before.walSyncs,
  };
}

async function checkpoint(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("CHECKPOINT");
  } finally {
    await client.end();
  }
}

const stepsPerSecond = (r: EngineRun) => (r.executions * FLOW_STEPS) / (r.ms / 1000);
const plural = (workers: number) => `${workers} worker${workers > 1 ? "s" : ""}`;

/**
 * How each engine's rate moved from the fewest worker processes to the most in one durability mode, and
 * whether more workers added throughput: a change within SCALING_NOISE of 1.00x is said to add none.
 */
function scaling(raw: EngineRun[], mode: string, counts: number[]): string {
  if (counts.length < 2) return "";
  const [fewest, most] = [counts[0]!, counts.at(-1)!];
  const gain = (engine: Engine) => {
    const rate = (workers: number) =>
      stepsPerSecond(raw.find((r) => r.durability === mode && r.engine === engine && r.workers === workers)!);
    return rate(most) / rate(fewest);
  };
  const said = (g: number) =>
    g > 1 + SCALING_NOISE
      ? "more throughput"
      : g < 1 - SCALING_NOISE
        ? "less throughput"
        : "no throughput beyond noise";
  return `durability ${mode}, from ${fewest} to ${most} worker processes: loomwork's steps per second went ${ratio(gain("loomwork"))} (${said(gain("loomwork"))}), DBOS's ${ratio(gain("dbos"))} (${said(gain("dbos"))})`;
}

/** What durability on cost an engine: its steps per second on over off, by worker count. */
function durabilityCost(raw: EngineRun[], engine: Engine, counts: number[]): string {
  const of = (mode: string, workers: number) =>
    raw.find((r) => r.durability === mode && r.engine === engine && r.workers === workers)!;
  return counts
    .map((w) => {
      const [on, off] = [of("on", w), of("off", w)];
      return `${plural(w)} ${ratio(stepsPerSecond(on) / stepsPerSecond(off))}`;
    })
    .join(", ");
}

export async function measureFleet(options: BenchOptions): Promise<Section> {
  const quick = options.mode === "quick";
  const counts = quick ? [1] : [1, 2, 4, 8];
  const executions = quick ? 8 : EXECUTIONS;
  // Durability is switched between rows with ALTER SYSTEM, which a command-line setting would beat.
  const server = await startPostgres({ durabilitySettings: "alter-system" });
  // A user's server (LOOMWORK_PG_URL) is measured in the mode it has: its settings are not ours to change.
  const modes: string[] = server.owned
    ? (["on", "off"] satisfies Durability[])
    : [durabilityLabel(await durabilitySettings(server.url))];
  const rows: string[][] = [];
  const raw: EngineRun[] = [];
  const goals: Goal[] = [];
  let langGraph: Awaited<ReturnType<typeof measureLangGraphPostgres>> | undefined;
  try {
    // Rows run workers by workers, both modes in turn (alternating which first), so the other work on the
    // machine, which comes and goes, weighs on both modes alike; they are listed mode by mode.
    const ran: { mode: string; workers: number; byEngine: Record<Engine, EngineRun> }[] = [];
    for (const [i, workers] of counts.entries()) {
      for (const mode of i % 2 === 0 ? modes : [...modes].reverse()) {
        if (server.owned) await setDurability(server.url, mode as Durability);
        // Alternate which engine goes first, so neither always runs on a warmer server.
        const order: Engine[] = ran.length % 2 === 0 ? ["loomwork", "dbos"] : ["dbos", "loomwork"];
        const byEngine = {} as Record<Engine, EngineRun>;
        for (const engine of order)
          byEngine[engine] = await measured(server, engine, workers, executions, mode, quick ? 0 : STATS_LAG_MS);
        ran.push({ mode, workers, byEngine });
      }
    }
    for (const mode of modes)
      for (const { workers, byEngine } of ran.filter((r) => r.mode === mode)) {
        const [loom, dbos] = [byEngine.loomwork, byEngine.dbos];
        const versus = ratio(stepsPerSecond(loom) / stepsPerSecond(dbos));
        for (const engine of ["loomwork", "dbos"] as const) {
          const r = byEngine[engine];
          raw.push(r);
          const steps = executions * FLOW_STEPS;
          rows.push([
            r.durability,
            String(workers),
            ENGINE_LABEL[engine],
            (executions / (r.ms / 1000)).toFixed(1),
            stepsPerSecond(r).toFixed(0),
            (r.workerCpuMs / steps).toFixed(2),
            (r.commits / steps).toFixed(2),
            (r.writes / steps).toFixed(2),
            r.walSyncs === undefined ? "n/a" : (r.walSyncs / steps).toFixed(2),
            engine === "loomwork" ? versus : "",
          ]);
        }
        goals.push({
          goal: `steps per second at or above DBOS Transact's on the same server, durability ${mode}, ${plural(workers)}`,
          met: stepsPerSecond(loom) >= stepsPerSecond(dbos),
          detail: `loomwork ${stepsPerSecond(loom).toFixed(0)} steps/s, DBOS ${stepsPerSecond(dbos).toFixed(0)} steps/s (${versus} of DBOS's rate)`,
        });
      }
    // The LangGraph comparison is about bytes and time per turn, measured as before with durability off.
    if (server.owned) await setDurability(server.url, "off");
    langGraph = await measureLangGraphPostgres(server.url, options.compareTurns, quick ? 1 : 3);
  } finally {
    await server.dispose();
  }
  const both = modes.includes("on") && modes.includes("off");
  return {
    id: "fleet",
    title:
      "8. The fleet on PostgreSQL: executions and steps per second by durability mode and worker processes, beside DBOS Transact and LangGraph's Postgres checkpointer",
    method: [
      `${executions} executions of a ${FLOW_STEPS}-step flow (each step a task effect returning a small object), submitted with \`app.submit\` from the benchmark's process and awaited with \`app.result\`; worker processes run \`createWorker\` with concurrency ${CONCURRENCY} and pollMs ${POLL_MS}. Time from the first submit to the last result.`,
      `DBOS Transact ${DBOS_VERSION} (\`@dbos-inc/dbos-sdk\`) on the same server in the same run: the same ten steps as \`DBOS.registerStep\` functions called in sequence by a \`DBOS.registerWorkflow\` workflow (bench/dbosFlow.ts); worker processes \`DBOS.launch\` with \`systemDatabaseUrl\` set to the server and dequeue from a queue with \`workerConcurrency\` ${CONCURRENCY} and \`minPollingIntervalMs\` ${POLL_MS}; the benchmark's process enqueues with a \`DBOSClient\` and awaits them with \`client.waitAll\` (one query for every id, every ${POLL_MS} ms), then reads each result. Each run has a fresh schema (loomwork's \`schema\`, DBOS's \`systemDatabaseSchemaName\`) and starts after a \`CHECKPOINT\`; the engines alternate which runs first.`,
      server.owned
        ? 'The server is a local throwaway cluster (PostgreSQL 15) on the same machine as the workers, so the workers and the server share its cores. Durability "on" is PostgreSQL\'s defaults, as users run it: `fsync`, `synchronous_commit` and `full_page_writes` on, so each commit waits for its WAL flush; "off" is all three off. The mode is switched between rows with `ALTER SYSTEM` and a reload (the rows run worker count by worker count, both modes in turn), and read back with `SHOW` from a fresh connection before every run (the mode column is what that connection saw).'
        : `The server is LOOMWORK_PG_URL, measured in the mode it has (its settings are not changed): ${modes[0]}.`,
    ],
    tables: [
      {
        caption:
          "Worker CPU is the worker processes' CPU per step from the first submit to the last result. Over the whole variant (set-up, schema migrations and the schema's drop included), per step: server commits are the transactions the server committed, read-only ones included (pg_stat_database, every database of the server); write transactions are the transaction ids assigned (the commits that wait for a WAL flush with durability on); WAL flushes are pg_stat_wal's wal_sync (0 with fsync off; several commits can share one flush). The ratio is loomwork's steps per second over DBOS's in the same row",
        head: [
          "durability",
          "workers",
          "engine",
          "executions/s",
          "steps/s",
          "worker CPU ms per step",
          "server commits per step",
          "write transactions per step",
          "WAL flushes per step",
          "loomwork / DBOS steps/s",
        ],
        rows,
        align: ["l", "r", "l", "r", "r", "r", "r", "r", "r", "r"],
      },
      ...(langGraph?.tables ?? []),
    ],
    goals: [...goals, ...(langGraph?.goals ?? [])],
    notes: [
      "Each macrostep is one append statement (one round trip): a step's outcome and the transition it causes go in together. DBOS checkpoints each step's output in its own transaction, and the workflow's status at start and end. So both engines commit about one write transaction per step, the commit that waits for its WAL flush with durability on; the rest of the server's commits are read-only (polls, claims and dequeues that found nothing, result reads), which wait for no flush.",
      `On this ${availableParallelism()}-core machine the server, the workers and the submitter share the cores; ${
        modes
          .map((m) => scaling(raw, m, counts))
          .filter(Boolean)
          .join("; ") || "one worker count only"
      }.`,
      ...(both
        ? [
            `Durability on over off, steps per second: loomwork ${durabilityCost(raw, "loomwork", counts)}; DBOS ${durabilityCost(raw, "dbos", counts)}.`,
          ]
        : []),
      ...(langGraph?.notes ?? []),
    ],
    raw: { fleet: raw, langGraph: langGraph?.raw },
  };
}
