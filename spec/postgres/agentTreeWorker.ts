// A worker process of the fleet's crash campaign for agents (spec/postgres/agentTree.test.ts): createWorker over the
// campaign's schema with a real AI SDK provider against the test's loopback server; every model and tool run recorded
// in the database as it starts (no dedupe). At each kill point it reaches (the start of a step, or after the append of
// an execution's end), it claims the point in the `kills` table (each fires once in the campaign) and SIGKILLs itself.
import { writeSync } from "node:fs";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createToolEffect, type EffectContext } from "../../actors/effects/effect.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { createWorker, postgresStores } from "../../adapters/postgres/index.js";
import { EXECUTION_ENDED } from "../../stores/schema.js";
import { finding, orchestrator, searchInput } from "../support/agentTree.js";
import { PROVIDERS } from "../support/providers.js";

/** Where a worker dies: at the start of `stepId` of `executionId`, or once `executionId`'s end is appended. */
export interface AgentKillPoint {
  name: string;
  executionId: string;
  stepId?: string;
}

const { url, schema, name, baseURL, points } = JSON.parse(process.argv[2]!) as {
  url: string;
  schema: string;
  name: string;
  baseURL: string;
  points: AgentKillPoint[];
};
const print = (line: string) => void writeSync(1, `${line}\n`);
const stores = await postgresStores({ url, schema, pollMs: 100, max: 4 });

const die = async (point: AgentKillPoint): Promise<void> => {
  const { rowCount } = await stores.db.query(
    `INSERT INTO "${schema}".kills (point, execution_id, worker) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    [point.name, point.executionId, name],
  );
  if (rowCount !== 1) return;
  print(`dying ${point.name}`);
  process.kill(process.pid, "SIGKILL");
  await new Promise(() => undefined);
};

// Every run recorded as it starts; a run at a kill point dies there, its outcome never journaled.
const started = async (ctx: EffectContext) => {
  await stores.db.query(
    `INSERT INTO "${schema}".side_effects (idempotency_key, execution_id, step_id, worker) VALUES ($1, $2, $3, $4)`,
    [ctx.idempotencyKey, ctx.executionId, ctx.stepId, name],
  );
  print(`run ${name} ${ctx.executionId} ${ctx.stepId}`);
  for (const point of points)
    if (point.stepId === ctx.stepId && point.executionId === ctx.executionId) await die(point);
};

const withHooks = stores.events.withHooks.bind(stores.events);
stores.events.withHooks = (hooks) => {
  const store = withHooks(hooks);
  const append = store.append.bind(store);
  store.append = async (executionId, expectedSeq, records) => {
    await append(executionId, expectedSeq, records);
    print(`append ${name} ${executionId} ${records.at(-1)!.seq}`);
    if (records.some((r) => r.type === EXECUTION_ENDED))
      for (const point of points) if (point.stepId === undefined && point.executionId === executionId) await die(point);
  };
  return store;
};

const model = createLlmEffect(fromAiSdk(PROVIDERS[2]!.model(baseURL)));
await createWorker({
  stores,
  logics: [orchestrator],
  effects: {
    model: { ...model, run: async (request, ctx) => (await started(ctx), model.run(request, ctx)) },
    search: createToolEffect(async ({ q }, ctx) => (await started(ctx), { hits: [finding(q)] }), {
      inputSchema: searchInput,
    }),
  },
  concurrency: 1,
  leaseMs: 1_500,
  pollMs: 100,
  drainMs: 2_000,
  id: name,
  signals: ["SIGTERM"],
});
print(`ready ${name}`);
