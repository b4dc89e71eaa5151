// Retention on PostgreSQL (issue 37): executions run by the fleet's workers, ended past their period, are kept as
// summaries by applyRetention from a plain app on the same schema: their records, snapshots and fleet rows go, two
// records and the catalogue row stay; a rule of nothing removes them. On a real server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createWorker, postgresStores } from "../../adapters/postgres/index.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { applyRetention } from "../../lifecycle.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

const agent = agentLoop$({ id: "small", model: "model", warnTranscriptBytes: false });
const effects = {
  model: createLlmEffect(scriptedModel(() => ({ text: "done", usage: { inputTokens: 4, outputTokens: 2 } }))),
};

describe("retention on PostgreSQL", () => {
  it("keeps summaries of the fleet's ended executions, then nothing", async () => {
    const schema = freshSchema("retention");
    const stores = await postgresStores({ url: server.url, schema, pollMs: 100 });
    const worker = await createWorker({ stores, logics: [agent], effects, signals: [], pollMs: 100 });
    const app = createApp(defineConfig({ stores, effects: {}, retention: { keepFor: 0 } }));
    const rows = async (table: string) =>
      (await stores.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".${table}`)).rows[0]!.n;
    try {
      for (const id of ["a", "b"]) await app.submit(agent, { executionId: id, input: { prompt: id } });
      for (const id of ["a", "b"]) await app.result(id);
      expect(await rows("fleet")).toBe(2);
      expect(await applyRetention(app)).toMatchObject({ summarized: 2, removed: 0 });
      expect(await app.result("a")).toEqual({
        retained: "summary",
        usage: { modelCalls: 1, inputTokens: 4, outputTokens: 2, totalTokens: 6 },
      });
      const a = await stores.events.read("a");
      expect(a.map((r) => r.seq)).toEqual([1, 2]);
      expect(await rows("fleet")).toBe(0);
      expect((await stores.events.getExecution("b"))?.status).toBe("done");
      expect(await applyRetention(app, { keepFor: 0, keep: "nothing" })).toMatchObject({ removed: 2 });
      expect(await stores.events.getExecution("a")).toBeUndefined();
    } finally {
      await worker.stop();
      await app.close();
      await stores.close();
      await dropSchema(server.url, schema);
    }
  }, 60_000);
});
