// A worker process of the fleet campaign (spec/reliability/fleet.test.ts, campaign 17): createWorker over the fleet's
// schema, the fleet agent's effects, every tool call recorded as a side effect in the database (with
// its idempotency key, no dedupe), every accepted append and every lost lease printed on stdout.
// `freezeAfterModelOf`: the worker stops itself (SIGSTOP) right after the append that journals that
// execution's first model reply, before the step it schedules has started: a pause at the worst moment,
// at a point the test chose rather than at a time it guessed. `simulatedClock`: the worker's app runs on a
// simulated clock that moves only on SIGUSR2 (once a timer is armed, past it): the test fires a durable
// timer at the moment it chooses.
import { writeSync } from "node:fs";
import { simulatedClock } from "../../../actors/clock.js";
import { createWorker, postgresStores } from "../../../adapters/postgres/index.js";
import { STEP_COMPLETED } from "../../../stores/schema.js";
import { fleetAgent, fleetEffects, tickingMachine } from "../../postgres/fleet.js";

const { url, schema, name, leaseMs, delayMs, concurrency, freezeAfterModelOf, simulated } = JSON.parse(
  process.argv[2]!,
) as {
  url: string;
  schema: string;
  name: string;
  leaseMs: number;
  delayMs: number;
  concurrency: number;
  freezeAfterModelOf?: string;
  simulated?: boolean;
};
const clock = simulated ? simulatedClock(Date.now()) : undefined;

// Written at once (the process may stop right after).
const print = (line: string) => void writeSync(1, `${line}\n`);
const stores = await postgresStores({ url, schema, pollMs: 100, max: 6 });
const effects = fleetEffects(async (call, kind) => {
  if (kind !== "tool") return;
  await stores.db.query(
    `INSERT INTO "${schema}".side_effects (idempotency_key, execution_id, step_id, worker) VALUES ($1, $2, $3, $4)`,
    [call.idempotencyKey, call.executionId, call.stepId, name],
  );
}, delayMs);
const worker = await createWorker({
  stores,
  logics: [fleetAgent, tickingMachine],
  effects,
  concurrency,
  leaseMs,
  pollMs: 100,
  drainMs: 2_000,
  id: name,
  signals: ["SIGTERM"],
  onLeaseLost: (executionId) => print(`lost ${executionId}`),
  ...(clock ? { app: { clock } } : {}),
});
if (clock) {
  process.on("SIGUSR2", () => {
    const fire = () => {
      if (clock.pendingTimers() === 0) return void setTimeout(fire, 10);
      clock.advance(Date.now() - clock.now() + 60_000); // past every timer armed by now: each was armed at most now
      print("fired");
    };
    fire();
  });
}
let froze = false;
worker.app.on("append", ({ executionId, records }) => {
  print(`append ${executionId} ${records.at(-1)!.seq}`);
  if (
    froze ||
    executionId !== freezeAfterModelOf ||
    !records.some((r) => r.type === STEP_COMPLETED && String(r.stepId).endsWith(":model"))
  )
    return;
  froze = true;
  print(`frozen ${executionId}`);
  process.kill(process.pid, "SIGSTOP");
});
print(`ready ${name}`);
