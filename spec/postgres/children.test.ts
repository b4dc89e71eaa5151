// Child executions with PostgreSQL (ADR 0012): a tree runs in an app on postgresStores (spec/conformance's children
// suite); on a fleet worker a child cannot start yet (D9 is not built): the parent's step fails with a ConfigError
// that says so, which its onError receives, and nothing is journaled for the child.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { createWorker, postgresStores } from "../../adapters/postgres/index.js";
import { STEP_FAILED } from "../../stores/schema.js";
import { parent } from "../children/machines.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

describe("child executions on the fleet", () => {
  it("a submitted parent's child is refused on a worker with a ConfigError naming the limit; nothing journaled for it", async () => {
    const schema = freshSchema("children");
    const open = () => postgresStores({ url: server.url, schema, pollMs: 100 });
    const submitter = await open();
    const workerStores = await open();
    const worker = await createWorker({
      stores: workerStores,
      logics: [parent],
      effects: { double: createToolEffect(async (n: number) => n * 2) },
      concurrency: 4,
      leaseMs: 2_000,
      pollMs: 100,
      drainMs: 5_000,
      signals: [],
    });
    const app = createApp(defineConfig({ stores: submitter, effects: {} }));
    try {
      await app.submit(parent, { executionId: "f1" });
      expect(await app.result("f1")).toEqual({ seen: [] }); // the parent's onError: "failed"
      const failed = (await app.log("f1")).find((r) => r.type === STEP_FAILED);
      expect(failed).toMatchObject({
        effectId: "loom.child",
        error: { name: "ConfigError", path: "execution.children", message: expect.stringMatching(/fleet worker.*D9/) },
      });
      expect(await submitter.events.head("f1/w")).toBe(0);
    } finally {
      await worker.stop();
      await app.close();
      await submitter.close();
      await workerStores.close();
      await dropSchema(server.url, schema);
    }
  }, 60_000);
});
