// Measurement 8: the fleet on PostgreSQL. Worker processes (`createWorker`, concurrency 8 each) over one
// local server; this process submits the 10-step flow N times and waits for every result. Executions
// and steps per second, with 1, 2 and 4 workers. The server is a throwaway cluster of the benchmark's own
// (spec/postgres/server.ts: fsync off, so the figures are the runtime's and the protocol's, not the
// disk's), or LOOMWORK_PG_URL. On the same server in the same run: DBOS Transact on the same 10-step flow
// (bench/dbos.ts) and LangGraph's Postgres checkpointer on the 200-turn agent (bench/langgraph.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { postgresStores } from "../adapters/postgres/index.js";
import { dropSchema, freshSchema, startPostgres } from "../spec/postgres/server.js";
import pg from "pg";
import { DBOS_VERSION, runDbos } from "./dbos.js";
import { processesCpuMs } from "./fleetCpu.js";
import { FLOW_STEPS, tenStepFlow } from "./fleetFlow.js";
import { measureLangGraphPostgres } from "./langgraph.js";
import type { BenchOptions } from "./options.js";
import { ratio, type Goal, type Section } from "./report.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CONCURRENCY = 8;
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
    for (let i = 0; i < workers; i++) children.push(await startWorker(url, schema));
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
    for (const child of children) child.kill("SIGKILL");
    await stores.close();
    await dropSchema(url, schema);
  }
}

/** Transactions the server has committed so far, over every database (its statistics lag up to a second: read after a pause). */
async function serverCommits(url: string): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>("SELECT sum(xact_commit) AS n FROM pg_stat_database")).rows[0]!.n);
  } finally {
    await client.end();
  }
}

type Engine = "loomwork" | "dbos";
interface EngineRun {
  engine: Engine;
  workers: number;
  executions: number;
  ms: number;
  /** CPU of the worker processes and of the submitting process (this one) over the run. */
  workerCpuMs: number;
  submitterCpuMs: number;
  commits: number;
}

/** Runs one engine's variant and the counters that explain it (worker CPU, submitter CPU, server commits). */
async function measured(url: string, engine: Engine, workers: number, executions: number): Promise<EngineRun> {
  const before = { commits: await serverCommits(url) };
  const cpu = process.cpuUsage();
  const { ms, workerCpuMs } =
    engine === "loomwork"
      ? await runFleet(url, workers, executions)
      : await runDbos(url, workers, executions, { concurrency: CONCURRENCY, pollMs: POLL_MS });
  const used = process.cpuUsage(cpu);
  const commits = (await serverCommits(url)) - before.commits;
  return { engine, workers, executions, ms, workerCpuMs, submitterCpuMs: (used.user + used.system) / 1000, commits };
}

/** loomwork's figure over DBOS's for one worker count. */
/**
 * How each engine's rate moved from the fewest worker processes to the most, and whether more workers
 * added throughput: a change within SCALING_NOISE of 1.00x is said to add none.
 */
function scaling(raw: EngineRun[], counts: number[]): string {
  if (counts.length < 2) return "";
  const [fewest, most] = [counts[0]!, counts.at(-1)!];
  const gain = (engine: Engine) => {
    const ms = (workers: number) => raw.find((r) => r.engine === engine && r.workers === workers)!.ms;
    return ms(fewest) / ms(most);
  };
  const said = (g: number) =>
    g > 1 + SCALING_NOISE
      ? "more throughput"
      : g < 1 - SCALING_NOISE
        ? "less throughput"
        : "no throughput beyond noise";
  return `; from ${fewest} to ${most} worker processes, loomwork's steps per second went ${ratio(gain("loomwork"))} (${said(gain("loomwork"))}), DBOS's ${ratio(gain("dbos"))} (${said(gain("dbos"))})`;
}

function cpuRatio(raw: EngineRun[], workers: number, key: "workerCpuMs" | "commits"): number {
  const of = (engine: Engine) => raw.find((r) => r.engine === engine && r.workers === workers)![key];
  return of("loomwork") / of("dbos");
}

export async function measureFleet(options: BenchOptions): Promise<Section> {
  const quick = options.mode === "quick";
  const executions = quick ? 8 : 200;
  const counts = quick ? [1] : [1, 2, 4];
  const server = await startPostgres();
  const rows: string[][] = [];
  const phases: string[][] = [];
  const raw: EngineRun[] = [];
  const goals: Goal[] = [];
  let langGraph: Awaited<ReturnType<typeof measureLangGraphPostgres>> | undefined;
  try {
    for (const [i, workers] of counts.entries()) {
      // Alternate which engine goes first, so neither always runs on a warmer server.
      const order: Engine[] = i % 2 === 0 ? ["loomwork", "dbos"] : ["dbos", "loomwork"];
      const byEngine = {} as Record<Engine, EngineRun>;
      for (const engine of order) byEngine[engine] = await measured(server.url, engine, workers, executions);
      for (const engine of ["loomwork", "dbos"] as const) {
        const r = byEngine[engine];
        raw.push(r);
        const steps = executions * FLOW_STEPS;
        rows.push([
          ENGINE_LABEL[engine],
          String(workers),
          String(executions),
          (r.ms / 1000).toFixed(2),
          (executions / (r.ms / 1000)).toFixed(1),
          (steps / (r.ms / 1000)).toFixed(0),
        ]);
        phases.push([
          ENGINE_LABEL[engine],
          String(workers),
          (r.workerCpuMs / steps).toFixed(2),
          (r.submitterCpuMs / executions).toFixed(2),
          (r.commits / steps).toFixed(2),
        ]);
      }
      const [loom, dbos] = [byEngine.loomwork, byEngine.dbos];
      goals.push({
        goal: `steps per second at or above DBOS Transact's on the same server, ${workers} worker${workers > 1 ? "s" : ""}`,
        met: loom.ms <= dbos.ms,
        detail: `loomwork ${((executions * FLOW_STEPS) / (loom.ms / 1000)).toFixed(0)} steps/s, DBOS ${((executions * FLOW_STEPS) / (dbos.ms / 1000)).toFixed(0)} steps/s (${ratio(dbos.ms / loom.ms)} of DBOS's rate)`,
      });
    }
    langGraph = await measureLangGraphPostgres(server.url, options.compareTurns, quick ? 1 : 3);
  } finally {
    await server.dispose();
  }
  return {
    id: "fleet",
    title:
      "8. The fleet on PostgreSQL: executions and steps per second by worker processes, beside DBOS Transact and LangGraph's Postgres checkpointer",
    method: [
      `${executions} executions of a ${FLOW_STEPS}-step flow (each step a task effect returning a small object), submitted with \`app.submit\` from the benchmark's process and awaited with \`app.result\`; worker processes run \`createWorker\` with concurrency ${CONCURRENCY} and pollMs ${POLL_MS}. Time from the first submit to the last result.`,
      `DBOS Transact ${DBOS_VERSION} (\`@dbos-inc/dbos-sdk\`) on the same server in the same run: the same ten steps as \`DBOS.registerStep\` functions called in sequence by a \`DBOS.registerWorkflow\` workflow (bench/dbosFlow.ts); worker processes \`DBOS.launch\` with \`systemDatabaseUrl\` set to the server and dequeue from a queue with \`workerConcurrency\` ${CONCURRENCY} and \`minPollingIntervalMs\` ${POLL_MS}; the benchmark's process enqueues with a \`DBOSClient\` and awaits them with \`client.waitAll\` (one query for every id, every ${POLL_MS} ms), then reads each result. Each run has a fresh schema (loomwork's \`schema\`, DBOS's \`systemDatabaseSchemaName\`); the engines alternate which runs first.`,
      "The server is a local throwaway cluster (PostgreSQL 15, fsync off) on the same machine as the workers, so the workers and the server share its cores.",
    ],
    tables: [
      { head: ["engine", "workers", "executions", "s", "executions/s", "steps/s"], rows },
      {
        caption:
          "Where the time goes: CPU of the worker processes per step (from their first submit to the last result), of the submitting process per execution and transactions the server committed per step (pg_stat_database, every database of the server; both over the whole variant, set-up and schema migrations included)",
        head: [
          "engine",
          "workers",
          "worker CPU ms per step",
          "submitter CPU ms per execution",
          "server commits per step",
        ],
        rows: phases,
      },
      ...(langGraph?.tables ?? []),
    ],
    goals: [...goals, ...(langGraph?.goals ?? [])],
    notes: [
      "Each macrostep is one append statement (one round trip): a step's outcome and the transition it causes go in together. DBOS checkpoints each step's output in its own transaction, and the workflow's status at start and end.",
      `On this ${availableParallelism()}-core machine the server, the workers and the submitter share the cores${scaling(raw, counts)}; the worker CPU column is what each engine spends per step of its own.`,
      `Worker CPU per step, loomwork / DBOS: ${counts.map((w) => `${w} worker${w > 1 ? "s" : ""} ${ratio(cpuRatio(raw, w, "workerCpuMs"))}`).join(", ")}; ` +
        `server commits per step, loomwork / DBOS: ${counts.map((w) => ratio(cpuRatio(raw, w, "commits"))).join(", ")}. ` +
        "loomwork sends one statement per macrostep (a step's outcome with its transition); DBOS a transaction per step, plus the workflow's status and its queue's dequeues.",
      ...(langGraph?.notes ?? []),
    ],
    raw: { fleet: raw, langGraph: langGraph?.raw },
  };
}
