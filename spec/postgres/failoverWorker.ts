// A worker process of the failover suite and bench (failover.ts): createWorker running the three-step flow, its
// first step hanging when `hang` is set so that the test can kill it mid-step.
import { writeSync } from "node:fs";
import { createWorker, postgresStores } from "../../adapters/postgres/index.js";
import { failoverEffects, failoverFlow, type FailoverWorkerConfig } from "./failover.js";

const config = JSON.parse(process.argv[2]!) as FailoverWorkerConfig;
const stores = await postgresStores({ url: config.url, schema: config.schema, pollMs: 100, max: 4 });
await createWorker({
  stores,
  logics: [failoverFlow],
  effects: failoverEffects(stores.db, config.name, config.hang, config.delayMs),
  concurrency: 4,
  leaseMs: config.leaseMs,
  sessionCheckMs: config.sessionCheckMs,
  pollMs: 100,
  id: config.name,
  onLeaseLost: (executionId) => writeSync(1, `lost ${executionId}\n`),
  signals: ["SIGTERM"],
});
writeSync(1, `ready ${config.name}\n`);
