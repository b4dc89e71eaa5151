// A worker process of the DBOS side of the fleet benchmark: DBOS Transact launched on the same server,
// dequeuing the 10-step workflow from a queue with the fleet worker's concurrency, until SIGTERM.
import { DBOS } from "@dbos-inc/dbos-sdk";
import { DBOS_APP, DBOS_QUEUE, registerDbosFlow } from "../dbosFlow.js";

const { url, schema, concurrency, executor, pollMs } = JSON.parse(process.argv[2]!) as {
  url: string;
  schema: string;
  concurrency: number;
  executor: string;
  pollMs: number;
};
DBOS.setConfig({
  name: DBOS_APP,
  systemDatabaseUrl: url,
  systemDatabaseSchemaName: schema,
  systemDatabasePoolSize: concurrency + 2,
  executorID: executor,
  logLevel: "error",
});
registerDbosFlow();
await DBOS.launch();
// A database-backed queue is registered after launch (DBOS 5 persists its configuration).
await DBOS.registerQueue(DBOS_QUEUE, { workerConcurrency: concurrency, minPollingIntervalMs: pollMs });
process.on("SIGTERM", () => void DBOS.shutdown().finally(() => process.exit(0)));
process.stdout.write("dbos-worker-ready\n");
