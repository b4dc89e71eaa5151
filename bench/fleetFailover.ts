// Measurement: failover on the fleet. A worker process is SIGKILLed in the middle of a step; a second worker process
// takes the execution over. Time from the SIGKILL to the first step the second worker starts, by the database's
// clock, on the session path (createWorker's default: the dead worker's session ended, its leases given back within
// sessionCheckMs) beside the lease path (sessionCheckMs false: its leases expire leaseMs after its last heartbeat).
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { postgresStores } from "../adapters/postgres/index.js";
import { WORKER_DEFAULTS } from "../adapters/postgres/constants.js";
import { createStepsTable, failoverFlow, spawnFailoverWorker } from "../spec/postgres/failover.js";
import { dropSchema, freshSchema, startPostgres } from "../spec/postgres/server.js";
import type { LiveChild } from "../spec/reliability/support.js";
import type { BenchOptions } from "./options.js";
import type { Goal, Section } from "./report.js";

const GOAL_MS = 2_000;
type Path = "session" | "lease";

/** One takeover: ms from the SIGKILL to the survivor's first step of the execution. */
async function takeover(url: string, path: Path): Promise<number> {
  const schema = freshSchema("failover");
  const stores = await postgresStores({ url, schema, pollMs: 100 });
  const children: LiveChild[] = [];
  const app = createApp(defineConfig({ stores, effects: {} }));
  try {
    await createStepsTable(stores.db);
    const config = {
      url,
      schema,
      leaseMs: WORKER_DEFAULTS.leaseMs,
      sessionCheckMs: path === "session" ? WORKER_DEFAULTS.sessionCheckMs : (false as const),
    };
    const doomed = await spawnFailoverWorker({ ...config, name: "doomed", hang: true });
    children.push(doomed);
    await app.submit(failoverFlow, { executionId: "x", input: null });
    const started = async (worker: string) =>
      (
        await stores.db.query<{ at: Date }>(
          `SELECT at FROM ${stores.db.s}.step_starts WHERE execution_id = 'x' AND worker = $1 ORDER BY id LIMIT 1`,
          [worker],
        )
      ).rows[0]?.at;
    while (!(await started("doomed"))) await new Promise((resolve) => setTimeout(resolve, 20));
    children.push(await spawnFailoverWorker({ ...config, name: "survivor", hang: false }));
    doomed.child.kill("SIGKILL");
    const killedAt = (await stores.db.query<{ now: Date }>("SELECT clock_timestamp() AS now")).rows[0]!.now;
    let at: Date | undefined;
    while (!(at = await started("survivor"))) await new Promise((resolve) => setTimeout(resolve, 20));
    await app.result("x");
    return at.getTime() - killedAt.getTime();
  } finally {
    for (const child of children) child.child.kill("SIGKILL");
    await Promise.all(children.map((c) => c.exited));
    await app.close();
    await stores.close();
    await dropSchema(url, schema);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function measureFleetFailover(options: BenchOptions): Promise<Section> {
  const reps = options.mode === "quick" ? 1 : 3;
  const server = await startPostgres();
  const times: Record<Path, number[]> = { session: [], lease: [] };
  try {
    for (let i = 0; i < reps; i++)
      for (const path of ["session", "lease"] as const) times[path].push(await takeover(server.url, path));
  } finally {
    await server.dispose();
  }
  const row = (path: Path, label: string) => [
    label,
    String(reps),
    (median(times[path]) / 1000).toFixed(2),
    (Math.max(...times[path]) / 1000).toFixed(2),
  ];
  const goals: Goal[] = [
    {
      goal: `after a SIGKILL, the first step of a taken-over execution starts within ${GOAL_MS / 1000} s (session path)`,
      met: Math.max(...times.session) <= GOAL_MS,
      detail: `median ${(median(times.session) / 1000).toFixed(2)} s, worst ${(Math.max(...times.session) / 1000).toFixed(2)} s; lease path median ${(median(times.lease) / 1000).toFixed(2)} s`,
    },
  ];
  return {
    id: "fleetFailover",
    title:
      "The fleet's failover: from a worker's SIGKILL to the first step taken over, at session end and at lease expiry",
    method: [
      "Two worker processes (`createWorker`, concurrency 4, pollMs 100, leaseMs 15000: the default) on a local throwaway cluster; the first claims a 3-step execution and hangs in its first step; the second is started; the first is SIGKILLed. Time from the SIGKILL (the server's clock right after it) to the start of the second worker's first step of that execution (recorded by the step with the server's clock).",
      `Session path: sessionCheckMs ${WORKER_DEFAULTS.sessionCheckMs} (the default): the dead worker's session ended, its advisory lock released, and the next check gives its leases back. Lease path: sessionCheckMs false: its lease expires leaseMs after its last heartbeat (every leaseMs / 3).`,
    ],
    tables: [
      {
        head: ["path", "runs", "median s", "worst s"],
        rows: [row("session", "session end (default)"), row("lease", "lease expiry (sessionCheckMs: false)")],
      },
    ],
    goals,
    notes: [
      "The lease path waits between 2/3 of leaseMs and leaseMs after the SIGKILL, depending on when the last heartbeat was; the session path waits for the server to see the socket close, the next check (every sessionCheckMs on every worker) and a claim (the check notifies the fleet).",
    ],
    raw: times,
  };
}
