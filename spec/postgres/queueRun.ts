// The queue suites' and bench's run: a three-step flow whose first steps are recorded in start order, executions
// submitted on many keys to a queue with limits, run on a fleet of workers in this process while the running
// executions per key are sampled from the database.
import { createTaskEffect } from "../../actors/effects/effect.js";
import type { PgDatabase } from "../../adapters/postgres/database.js";
import { failoverFlow } from "./failover.js";
import type { PgServer } from "./server.js";
import { startFleet } from "./workers.js";

export const keyOf = (executionId: string) => executionId.split("-")[0]!;

/** The flow's effect, counting the executions of each key running a step at once, in this process. */
export function countingEffects(delayMs: number, gate?: Promise<void>) {
  const firstSteps: string[] = [];
  const step = createTaskEffect(async (input: { i: number }, ctx) => {
    if (input.i === 0) firstSteps.push(ctx.executionId);
    await gate;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return { i: input.i };
  });
  return { effects: { step }, firstSteps };
}

/** Samples, from the database, the executions of each key that started (admitted) and have not ended. */
export async function sampleRunning(db: PgDatabase) {
  const { rows } = await db.query<{ key: string; n: number }>(
    `SELECT f.queue_key AS key, count(*)::int AS n FROM ${db.s}.fleet f JOIN ${db.s}.executions e ON e.execution_id = f.execution_id
     WHERE f.admitted_at IS NOT NULL AND e.status = 'running' GROUP BY f.queue_key`,
  );
  return rows;
}

/** Submits `perKeyCount` executions on each of `keys` keys (interleaved), runs them on `workers` workers, samples the limits. */
export async function limitsRun(
  server: PgServer,
  options: {
    keys: number;
    perKeyCount: number;
    workers: number;
    concurrency: number;
    perKey: number;
    delayMs: number;
  },
) {
  const counting = countingEffects(options.delayMs);
  const f = await startFleet(server, {
    name: "queues",
    workers: options.workers,
    logics: [failoverFlow],
    effects: counting.effects,
    concurrency: 8,
    queues: { perUser: { concurrency: options.concurrency, perKey: options.perKey } },
  });
  let done = false;
  try {
    const ids: string[] = [];
    for (let n = 0; n < options.perKeyCount; n++)
      for (let k = 0; k < options.keys; k++) ids.push(`k${k}-${String(n).padStart(4, "0")}`);
    let maxPerKey = 0;
    let maxTotal = 0;
    let samples = 0;
    const sampler = (async () => {
      while (!done) {
        const rows = await sampleRunning(f.submitter.db);
        samples++;
        maxPerKey = Math.max(maxPerKey, ...rows.map((r) => r.n), 0);
        maxTotal = Math.max(
          maxTotal,
          rows.reduce((sum, r) => sum + r.n, 0),
        );
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    sampler.catch(() => undefined);
    for (const id of ids)
      await f.app.submit(failoverFlow, { executionId: id, input: null, queue: "perUser", key: keyOf(id) });
    const results = await Promise.all(ids.map((id) => f.app.result(id)));
    done = true;
    await sampler;
    return { ids, results, maxPerKey, maxTotal, samples, firstSteps: counting.firstSteps };
  } finally {
    done = true;
    await f.close();
  }
}
