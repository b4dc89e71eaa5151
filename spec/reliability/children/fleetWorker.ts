// A worker process of the fleet campaign (spec/reliability/fleet.test.ts, campaign 17): createWorker over the fleet's
// schema, the fleet agent's effects, every tool call recorded as a side effect in the database (with
// its idempotency key, no dedupe), every accepted append and every lost lease printed on stdout.
import { createWorker, postgresStores } from "../../../adapters/postgres/index.js";
import { fleetAgent, fleetEffects } from "../../postgres/fleet.js";

const { url, schema, name, leaseMs, delayMs, concurrency } = JSON.parse(process.argv[2]!) as {
  url: string;
  schema: string;
  name: string;
  leaseMs: number;
  delayMs: number;
  concurrency: number;
};

const print = (line: string) => process.stdout.write(`${line}\n`);
const stores = await postgresStores({ url, schema, pollMs: 100, max: 6 });
const effects = fleetEffects(async (call, kind) => {
  if (kind !== "tool") return;
  await stores.db.query(`INSERT INTO "${schema}".side_effects (idempotency_key, execution_id, step_id, worker) VALUES ($1, $2, $3, $4)`, [call.idempotencyKey, call.executionId, call.stepId, name]);
}, delayMs);
const worker = await createWorker({
  stores,
  logics: [fleetAgent],
  effects,
  concurrency,
  leaseMs,
  pollMs: 100,
  drainMs: 2_000,
  id: name,
  signals: ["SIGTERM"],
  onLeaseLost: (executionId) => print(`lost ${executionId}`),
});
worker.app.on("append", ({ executionId, records }) => print(`append ${executionId} ${records.at(-1)!.seq}`));
print(`ready ${name}`);
