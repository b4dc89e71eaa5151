// A worker process of the fleet benchmark: `createWorker` running the 10-step flow until SIGTERM.
import { createWorker, postgresStores } from "../../adapters/postgres/index.js";
import { flowEffects, tenStepFlow } from "../fleetFlow.js";

const { url, schema, concurrency } = JSON.parse(process.argv[2]!) as {
  url: string;
  schema: string;
  concurrency: number;
};
const stores = await postgresStores({ url, schema, pollMs: 50, max: concurrency + 2 });
await createWorker({
  stores,
  logics: [tenStepFlow],
  effects: flowEffects,
  concurrency,
  pollMs: 50,
  signals: ["SIGTERM"],
});
process.stdout.write("ready\n");
