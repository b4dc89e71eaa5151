// A worker process of the fleet's crash campaign for children (spec/postgres/treeCrash.test.ts): createWorker over the
// campaign's schema, every effect run recorded in the database (its idempotency key, no dedupe), every append it makes
// printed. At each kill point (treeFleet.ts) it reaches, before or after the append, it claims the point in the
// `kills` table (each fires once in the whole campaign) and SIGKILLs itself.
import { writeSync } from "node:fs";
import { createToolEffect } from "../../actors/effects/effect.js";
import { createWorker, postgresStores } from "../../adapters/postgres/index.js";
import type { StoredRecord } from "../../stores/types.js";
import { kid, matches, tree, type KillPoint } from "./treeFleet.js";

const { url, schema, name, leaseMs, points } = JSON.parse(process.argv[2]!) as {
  url: string;
  schema: string;
  name: string;
  leaseMs: number;
  points: KillPoint[];
};
const print = (line: string) => void writeSync(1, `${line}\n`);
const stores = await postgresStores({ url, schema, pollMs: 100, max: 4 });

const reach = async (when: "before" | "after", executionId: string, records: StoredRecord[]) => {
  for (const point of points) {
    if (point.when !== when || !matches(point, executionId, records)) continue;
    const { rowCount } = await stores.db.query(
      `INSERT INTO "${schema}".kills (point, execution_id, worker) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [`${point.name}:${point.executionId}`, executionId, name],
    );
    if (rowCount !== 1) continue;
    print(`dying ${point.name} ${executionId}`);
    process.kill(process.pid, "SIGKILL");
    await new Promise(() => undefined); // never returns: the append does not happen
  }
};
const withHooks = stores.events.withHooks.bind(stores.events);
stores.events.withHooks = (hooks) => {
  const store = withHooks(hooks);
  const append = store.append.bind(store);
  store.append = async (executionId, expectedSeq, records) => {
    await reach("before", executionId, records);
    await append(executionId, expectedSeq, records);
    print(`append ${name} ${executionId} ${records.at(-1)!.seq}`);
    await reach("after", executionId, records);
  };
  return store;
};

const effect = <T>(run: (input: number) => T) =>
  createToolEffect(async (input: number, ctx) => {
    await stores.db.query(
      `INSERT INTO "${schema}".side_effects (idempotency_key, execution_id, step_id, worker) VALUES ($1, $2, $3, $4)`,
      [ctx.idempotencyKey, ctx.executionId, ctx.stepId, name],
    );
    return run(input);
  });

await createWorker({
  stores,
  logics: [tree, kid],
  effects: { prep: effect((n) => n + 1), work: effect((n) => n * 10) },
  concurrency: 1,
  leaseMs,
  pollMs: 100,
  drainMs: 2_000,
  id: name,
  signals: ["SIGTERM"],
});
print(`ready ${name}`);
