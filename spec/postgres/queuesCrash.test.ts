// Queue limits across worker deaths and a server restart: worker processes, one SIGKILLed mid-run and replaced, then
// the server stopped as in a crash and started again; the executions running per key and in all, sampled from the
// database throughout, never exceed the limits; every execution ends; order within a key is kept.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { postgresStores } from "../../adapters/postgres/index.js";
import type { LiveChild } from "../reliability/support.js";
import { until } from "../support/harness.js";
import { createStepsTable, failoverFlow, spawnFailoverWorker } from "./failover.js";
import { keyOf, sampleRunning } from "./queueRun.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

describe("queue limits across worker deaths and a server restart", () => {
  it("a worker SIGKILLed and the server restarted mid-run: limits never exceeded, all end, order within a key kept", async () => {
    const schema = freshSchema("qcrash");
    const stores = await postgresStores({ url: server.url, schema, pollMs: 100 });
    const app = createApp(defineConfig({ stores, effects: {}, queues: { q: { concurrency: 2, perKey: 1 } } }));
    const children: LiveChild[] = [];
    const worker = async (name: string) => {
      const child = await spawnFailoverWorker({
        url: server.url,
        schema,
        name,
        leaseMs: 60_000,
        sessionCheckMs: 500,
        hang: false,
        delayMs: 40,
      });
      children.push(child);
      return child;
    };
    let sampling = true;
    let maxPerKey = 0;
    let maxTotal = 0;
    let samples = 0;
    const sampler = (async () => {
      while (sampling) {
        try {
          const rows = await sampleRunning(stores.db);
          samples++;
          maxPerKey = Math.max(maxPerKey, ...rows.map((r) => r.n), 0);
          maxTotal = Math.max(
            maxTotal,
            rows.reduce((sum, r) => sum + r.n, 0),
          );
        } catch {
          // the server is restarting
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    try {
      await createStepsTable(stores.db);
      const first = await worker("w1");
      await worker("w2");
      const ids: string[] = [];
      for (let n = 0; n < 8; n++) for (const key of ["a", "b", "c"]) ids.push(`${key}-${n}`);
      for (const id of ids)
        await app.submit(failoverFlow, { executionId: id, input: null, queue: "q", key: keyOf(id) });
      const count = async (sql: string) => (await stores.db.query<{ n: number }>(sql)).rows[0]!.n;
      await until(async () => (await count(`SELECT count(*)::int AS n FROM "${schema}".step_starts`)) >= 10, 60_000);
      first.child.kill("SIGKILL");
      await worker("w3");
      await until(
        async () =>
          (await count(`SELECT count(*)::int AS n FROM "${schema}".executions WHERE status <> 'running'`)) >= 12,
        60_000,
      );
      if (server.owned) {
        await server.stop("immediate");
        await server.start();
      }
      const diagnose = async () => {
        const q = async (sql: string) => JSON.stringify((await stores.db.query(sql)).rows);
        return new Error(
          `stalled: fleet ${await q(
            `SELECT f.execution_id, owner, epoch, lease_until > clock_timestamp() AS leased, admitted_at IS NOT NULL AS admitted, slot, e.status FROM "${schema}".fleet f LEFT JOIN "${schema}".executions e USING (execution_id) WHERE e.status IS DISTINCT FROM 'done' ORDER BY 1`,
          )}; workers ${await q(`SELECT * FROM "${schema}".workers`)}; children ${children
            .map((c) => `${c.stdout.slice(-300)} ${c.stderr.slice(-600)}`)
            .join(" | ")}`,
        );
      };
      // A stall shows the fleet's rows and the workers' output (a lease that runs out, 60 s, is no stall).
      let timer: ReturnType<typeof setTimeout> | undefined;
      const results = await Promise.race([
        Promise.all(ids.map((id) => app.result(id))),
        new Promise<never>((_, reject) => (timer = setTimeout(() => void diagnose().then(reject, reject), 150_000))),
      ]).finally(() => clearTimeout(timer));
      expect(results).toHaveLength(24);
      sampling = false;
      await sampler;
      expect(samples).toBeGreaterThan(10);
      expect(maxPerKey).toBe(1);
      expect(maxTotal).toBeLessThanOrEqual(2);
      const { rows } = await stores.db.query<{ execution_id: string }>(
        `SELECT execution_id FROM "${schema}".step_starts GROUP BY execution_id ORDER BY min(id)`,
      );
      for (const key of ["a", "b", "c"]) {
        const ofKey = rows.map((r) => r.execution_id).filter((id) => keyOf(id) === key);
        expect(ofKey).toEqual(Array.from({ length: 8 }, (_, n) => `${key}-${n}`));
      }
    } finally {
      sampling = false;
      await sampler;
      for (const child of children) child.child.kill("SIGKILL");
      await Promise.all(children.map((c) => c.exited));
      await app.close();
      await stores.close();
      await dropSchema(server.url, schema);
    }
  }, 180_000);
});
