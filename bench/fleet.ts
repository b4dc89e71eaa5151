// Measurement 8: the fleet on PostgreSQL. Worker processes (`createWorker`, concurrency 8 each) over one
// local server; this process submits the 10-step flow N times and waits for every result. Executions
// and steps per second, with 1, 2 and 4 workers. The server is a throwaway cluster of the benchmark's own
// (spec/postgres/server.ts: fsync off, so the figures are the runtime's and the protocol's, not the
// disk's), or LOOMWORK_PG_URL.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { postgresStores } from "../adapters/postgres/index.js";
import { dropSchema, freshSchema, startPostgres } from "../spec/postgres/server.js";
import { FLOW_STEPS, tenStepFlow } from "./fleetFlow.js";
import type { BenchOptions } from "./options.js";
import type { Section } from "./report.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CONCURRENCY = 8;

function startWorker(url: string, schema: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/child/fleetWorker.ts", JSON.stringify({ url, schema, concurrency: CONCURRENCY })], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_NO_WARNINGS: "1" },
  });
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve(child));
    child.on("exit", (code) => reject(new Error(`fleet worker exited with ${code}: ${err.slice(-1500)}`)));
  });
}

async function runFleet(url: string, workers: number, executions: number): Promise<{ ms: number }> {
  const schema = freshSchema("bench");
  const stores = await postgresStores({ url, schema, pollMs: 50 });
  const children: ChildProcess[] = [];
  try {
    for (let i = 0; i < workers; i++) children.push(await startWorker(url, schema));
    const app = createApp(defineConfig({ stores, effects: {} }));
    const ids = Array.from({ length: executions }, (_, i) => `f${i}`);
    const start = performance.now();
    await Promise.all(ids.map((id) => app.submit(tenStepFlow, { executionId: id, input: null })));
    await Promise.all(ids.map((id) => app.result(id)));
    const ms = performance.now() - start;
    await app.close();
    return { ms };
  } finally {
    for (const child of children) child.kill("SIGKILL");
    await stores.close();
    await dropSchema(url, schema);
  }
}

export async function measureFleet(options: BenchOptions): Promise<Section> {
  const quick = options.mode === "quick";
  const executions = quick ? 8 : 200;
  const counts = quick ? [1] : [1, 2, 4];
  const server = await startPostgres();
  const rows: string[][] = [];
  const raw: { workers: number; executions: number; ms: number }[] = [];
  try {
    for (const workers of counts) {
      const { ms } = await runFleet(server.url, workers, executions);
      raw.push({ workers, executions, ms });
      rows.push([String(workers), String(executions), (ms / 1000).toFixed(2), (executions / (ms / 1000)).toFixed(1), ((executions * FLOW_STEPS) / (ms / 1000)).toFixed(0)]);
    }
  } finally {
    await server.dispose();
  }
  return {
    id: "fleet",
    title: "8. The fleet on PostgreSQL: executions and steps per second by worker processes",
    method: [
      `${executions} executions of a ${FLOW_STEPS}-step flow (each step a task effect returning a small object), submitted with \`app.submit\` from the benchmark's process and awaited with \`app.result\`; worker processes run \`createWorker\` with concurrency ${CONCURRENCY}. Time from the first submit to the last result.`,
      "The server is a local throwaway cluster (PostgreSQL 15, fsync off) on the same machine as the workers, so the workers and the server share its cores.",
    ],
    tables: [{ head: ["workers", "executions", "s", "executions/s", "steps/s"], rows }],
    goals: [
      { goal: "steps per second at or above DBOS Transact's on the same server", met: "not measured", detail: "DBOS Transact was not run (issue 17 left it out for time)." },
      { goal: "at least 20x fewer bytes than LangGraph's Postgres checkpointer", met: "not measured", detail: "The LangGraph Postgres checkpointer was not run (issue 17 left it out for time)." },
    ],
    notes: ["Each macrostep is one append statement (one round trip): a step's outcome and the transition it causes go in together."],
    raw,
  };
}
