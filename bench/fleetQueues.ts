// Measurement: queues on the fleet (flow control). 1,000 executions of a 3-step flow over 50 keys, submitted to a
// queue with perKey 1 and concurrency 20, run by 3 workers (createWorker, concurrency 8 each, in this process); the
// executions running per key (started and not ended) are sampled from the database while they run.
import { startPostgres } from "../spec/postgres/server.js";
import { limitsRun } from "../spec/postgres/queueRun.js";
import type { BenchOptions } from "./options.js";
import type { Goal, Section } from "./report.js";

const keyOf = (executionId: string) => executionId.split("-")[0]!;

export async function measureFleetQueues(options: BenchOptions): Promise<Section> {
  const quick = options.mode === "quick";
  const shape = {
    keys: quick ? 10 : 50,
    perKeyCount: quick ? 5 : 20,
    workers: 3,
    concurrency: 20,
    perKey: 1,
    delayMs: 2,
  };
  const server = await startPostgres();
  let run: Awaited<ReturnType<typeof limitsRun>>;
  const start = performance.now();
  try {
    run = await limitsRun(server, shape);
  } finally {
    await server.dispose();
  }
  const ms = performance.now() - start;
  let ordered = true;
  for (let k = 0; k < shape.keys; k++) {
    const ofKey = run.firstSteps.filter((id) => keyOf(id) === `k${k}`);
    if (ofKey.join() !== [...ofKey].sort().join() || ofKey.length !== shape.perKeyCount) ordered = false;
  }
  const total = shape.keys * shape.perKeyCount;
  const goals: Goal[] = [
    {
      goal: `${total} executions over ${shape.keys} keys, perKey ${shape.perKey}, concurrency ${shape.concurrency}, ${shape.workers} workers: limits never exceeded, all finish, order within a key kept`,
      met:
        run.maxPerKey <= shape.perKey && run.maxTotal <= shape.concurrency && run.results.length === total && ordered,
      detail: `${run.samples} samples: at most ${run.maxPerKey} running per key, ${run.maxTotal} in all; ${run.results.length} finished; order within each key ${ordered ? "kept" : "broken"}`,
    },
  ];
  return {
    id: "fleetQueues",
    title: "The fleet's queues: per-key and global limits held across workers",
    method: [
      `${total} executions of a 3-step flow (each step a task effect of ${shape.delayMs} ms) over ${shape.keys} keys, submitted in turn over the keys to a queue with perKey ${shape.perKey} and concurrency ${shape.concurrency}; ${shape.workers} workers (createWorker, concurrency 8 each, pollMs 100) in the benchmark's process on a local throwaway cluster. A sampler reads, every 5 ms, the executions of each key that were admitted and have not ended.`,
    ],
    tables: [
      {
        head: ["executions", "keys", "s", "executions/s", "samples", "max running per key", "max running in all"],
        rows: [
          [
            String(total),
            String(shape.keys),
            (ms / 1000).toFixed(2),
            (total / (ms / 1000)).toFixed(1),
            String(run.samples),
            String(run.maxPerKey),
            String(run.maxTotal),
          ],
        ],
      },
    ],
    goals,
    notes: ["The time includes starting the workers and submitting (one submit at a time)."],
    raw: { shape, ms, maxPerKey: run.maxPerKey, maxTotal: run.maxTotal, samples: run.samples },
  };
}
