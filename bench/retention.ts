// Measurement: retention on PostgreSQL (issue 37). 10,000 finished executions of a small agent (3 model turns, 2 tool
// calls) on a throwaway cluster; the schema's bytes (pg_total_relation_size of every table, after VACUUM FULL so the
// figure is what the files hold) before and after `applyRetention(app)` keeping a summary, then nothing; and the time
// of each retention run.
import { agentLoop$ } from "../actors/agents/agentLoop.js";
import { createLlmEffect } from "../actors/agents/model.js";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { createToolEffect } from "../actors/effects/effect.js";
import { scriptedModel } from "../adapters/scripted/index.js";
import { postgresStores, type PostgresStores } from "../adapters/postgres/index.js";
import { applyRetention } from "../lifecycle.js";
import { dropSchema, freshSchema, startPostgres } from "../spec/postgres/server.js";
import type { BenchOptions } from "./options.js";
import { bytes, type Section } from "./report.js";

const agent = agentLoop$({ id: "small", model: "model", tools: ["lookup"], warnTranscriptBytes: false });
const effects = {
  model: createLlmEffect(
    scriptedModel((request, call) =>
      call < 2
        ? {
            toolCalls: [{ toolName: "lookup", input: { q: `question ${call}` } }],
            usage: { inputTokens: 90, outputTokens: 12 },
          }
        : {
            text: "An answer of a sentence or two, as a small agent gives.",
            usage: { inputTokens: 200, outputTokens: 30 },
          },
    ),
  ),
  lookup: createToolEffect(async ({ q }: { q: string }) => ({ hits: [`${q}: a result of about this size`] })),
};

async function schemaBytes(stores: PostgresStores): Promise<number> {
  const { rows: tables } = await stores.db.query<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = $1`,
    [stores.db.schema],
  );
  for (const { name } of tables) await stores.db.query(`VACUUM FULL ${stores.db.s}."${name}"`);
  const { rows } = await stores.db.query<{ total: string }>(
    `SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename)::regclass)), 0)::text AS total
     FROM pg_tables WHERE schemaname = $1`,
    [stores.db.schema],
  );
  return Number(rows[0]!.total);
}

export async function measureRetention(options: BenchOptions): Promise<Section> {
  const n = options.mode === "quick" ? 200 : 10_000;
  const server = await startPostgres();
  const schema = freshSchema("retention");
  const stores = await postgresStores({ url: server.url, schema, pollMs: 100 });
  try {
    const app = createApp(defineConfig({ stores, effects }));
    const filling = Date.now();
    for (let i = 0; i < n; i += 50) {
      const ids = Array.from({ length: Math.min(50, n - i) }, (_, j) => `run-${i + j}`);
      await Promise.all(ids.map((executionId) => app.start(agent, { executionId, input: { prompt: "a question" } })));
      await Promise.all(ids.map((executionId) => app.result(executionId)));
      if ((i + 50) % 2_000 === 0) console.error(`retention: ${i + 50} of ${n} executions written`);
    }
    const fillSeconds = (Date.now() - filling) / 1000;
    const whole = await schemaBytes(stores);
    let started = Date.now();
    const summary = await applyRetention(app, { keepFor: 0, keep: "summary", batchSize: 500 });
    const summarySeconds = (Date.now() - started) / 1000;
    const summarized = await schemaBytes(stores);
    started = Date.now();
    const removal = await applyRetention(app, { keepFor: 0, keep: "nothing", batchSize: 500 });
    const nothingSeconds = (Date.now() - started) / 1000;
    const nothing = await schemaBytes(stores);
    await app.close();
    return {
      id: "retention",
      title: "Retention on PostgreSQL: the bytes of finished executions before and after",
      method: [
        `${n.toLocaleString("en")} finished executions of a small agent (3 model turns, 2 tool calls each) on a throwaway local cluster (${fillSeconds.toFixed(0)} s to write); the schema's bytes (\`pg_total_relation_size\` of every table after \`VACUUM FULL\`, exact) before and after \`applyRetention(app, { keepFor: 0, keep: "summary" })\`, then \`keep: "nothing"\` over the summaries (batches of 500).`,
      ],
      tables: [
        {
          head: ["state", "schema bytes", "per execution", "retention run"],
          rows: [
            ["whole histories", bytes(whole), bytes(Math.round(whole / n)), ""],
            [
              `kept as summaries (${summary.summarized.toLocaleString("en")})`,
              bytes(summarized),
              bytes(Math.round(summarized / n)),
              `${summarySeconds.toFixed(1)} s, ${summary.batches} batches`,
            ],
            [
              `kept as nothing (${removal.removed.toLocaleString("en")})`,
              bytes(nothing),
              "",
              `${nothingSeconds.toFixed(1)} s, ${removal.batches} batches`,
            ],
          ],
        },
      ],
      goals: [],
      notes: [
        "What remains with nothing kept is the schema's fixed cost (its tables' and indexes' first pages) and the retention runs' own logs.",
      ],
      raw: { n, whole, summarized, nothing, summary, removal, summarySeconds, nothingSeconds },
    };
  } finally {
    await stores.close();
    await dropSchema(server.url, schema);
    await server.dispose();
  }
}
