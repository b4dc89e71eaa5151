// DBOS Transact beside the fleet (measurement 8): the same 10-step workflow (bench/dbosFlow.ts) on the same
// PostgreSQL server, run the same way: worker processes (DBOS launched, a queue with the fleet worker's
// concurrency and poll interval) dequeue it, and this process enqueues it N times with a DBOSClient and
// awaits them all (`waitAll`, one polling query for every id). Each run gets a fresh system-database schema, dropped at the end.
import { DBOSClient } from "@dbos-inc/dbos-sdk";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freshSchema } from "../spec/postgres/server.js";
import { DBOS_APP, DBOS_QUEUE, DBOS_WORKFLOW } from "./dbosFlow.js";
import { FLOW_STEPS } from "./fleetFlow.js";
import { processesCpuMs } from "./fleetCpu.js";
import { dropSchemaOfKilled, killed, startedAll } from "./fleetWorkers.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The installed DBOS Transact version (for the method text). */
export const DBOS_VERSION = "5.3.0";

function startDbosWorker(args: {
  url: string;
  schema: string;
  concurrency: number;
  executor: string;
  pollMs: number;
}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/child/dbosWorker.ts", JSON.stringify(args)], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_NO_WARNINGS: "1" },
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("dbos-worker-ready")) resolve(child);
    });
    child.on("exit", (code) => reject(new Error(`DBOS worker exited with ${code}: ${out.slice(-1500)}`)));
  });
}

/** Runs `executions` workflows on `workers` DBOS worker processes; the time from the first enqueue to the last result, and the workers' CPU over it. */
export async function runDbos(
  url: string,
  workers: number,
  executions: number,
  options: { concurrency: number; pollMs: number },
): Promise<{ ms: number; workerCpuMs: number }> {
  const schema = freshSchema("dbos");
  const children: ChildProcess[] = [];
  let client: DBOSClient | undefined;
  try {
    const launch = (i: number) =>
      startDbosWorker({ url, schema, concurrency: options.concurrency, executor: `w${i}`, pollMs: options.pollMs });
    // The first launch creates the schema (DBOS's migrations); the others find it, so they start together (not timed).
    children.push(await launch(0));
    await startedAll(
      Array.from({ length: workers - 1 }, (_, i) => launch(i + 1)),
      children,
    );
    client = await DBOSClient.create({
      systemDatabaseUrl: url,
      systemDatabaseSchemaName: schema,
      applicationName: DBOS_APP,
    });
    const ids = Array.from({ length: executions }, (_, i) => `d${i}`);
    const cpuAtReady = processesCpuMs(children.map((c) => c.pid));
    const start = performance.now();
    const handles = await Promise.all(
      ids.map((id) => client!.enqueue({ queueName: DBOS_QUEUE, workflowName: DBOS_WORKFLOW, workflowID: id })),
    );
    // waitAll polls every id in one query (per-handle getResult would poll each): DBOS's way to await many.
    await client.waitAll(handles, { pollingIntervalMs: options.pollMs });
    const results = await Promise.all(handles.map((h) => h.getResult()));
    if (results.some((r) => (r as { steps?: number }).steps !== FLOW_STEPS))
      throw new Error("a DBOS workflow ended without its ten steps");
    const ms = performance.now() - start;
    return { ms, workerCpuMs: processesCpuMs(children.map((c) => c.pid)) - cpuAtReady };
  } finally {
    await client?.destroy();
    await killed(children);
    await dropSchemaOfKilled(url, schema);
  }
}
