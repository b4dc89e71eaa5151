// A worker process for spec/postgres/schedules.test.ts: createWorker over the test's schema; it fires the stored
// schedules as every worker does, and prints "ready" once started. The test SIGKILLs one of them.
import { writeSync } from "node:fs";
import { createToolEffect } from "../../actors/effects/effect.js";
import { createWorker, postgresStores } from "../../adapters/postgres/index.js";
import { stamped } from "./scheduleFleet.js";

const { url, schema, name } = JSON.parse(process.argv[2]!) as { url: string; schema: string; name: string };
const stores = await postgresStores({ url, schema, pollMs: 100, max: 4 });
await createWorker({
  stores,
  logics: [stamped],
  effects: { stamp: createToolEffect(async (input: unknown) => ({ stamped: input, by: name })) },
  concurrency: 4,
  leaseMs: 1_500,
  pollMs: 100,
  drainMs: 2_000,
  id: name,
  signals: ["SIGTERM"],
});
writeSync(1, `ready ${name}\n`);
