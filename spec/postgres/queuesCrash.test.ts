// Queue limits across worker deaths and a server restart: worker processes, one SIGKILLed mid-run and replaced, then
// the server stopped as in a crash and started again; the executions running per key and in all, sampled from the
// database throughout, never exceed the limits; every execution ends; order within a key is kept. The second test
// does the same to a rate limit and to priorities: what was admitted before the crash is not admitted again (a
// takeover is no new start), no key starts more than its limit in any window, and what waited across the crash and
// the restart starts by priority, then in submit order.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
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
  it("a rate limit and priorities across a SIGKILL and a server restart: no key over its rate, no start twice, priority order kept", async () => {
    const schema = freshSchema("qrate");
    const stores = await postgresStores({ url: server.url, schema, pollMs: 100 });
    const PERIOD = 1_500;
    const app = createApp(
      defineConfig({
        stores,
        effects: {},
        queues: { prio: { concurrency: 1 }, rated: { rate: { limit: 2, periodMs: PERIOD } } },
      }),
    );
    const children: LiveChild[] = [];
    const worker = async (name: string, hang: boolean) => {
      const child = await spawnFailoverWorker({
        url: server.url,
        schema,
        name,
        leaseMs: 60_000,
        sessionCheckMs: 500,
        hang,
        delayMs: 50,
      });
      children.push(child);
      return child;
    };
    let sampling = true;
    let maxPrio = 0;
    let samples = 0;
    const sampler = (async () => {
      while (sampling) {
        try {
          const { rows } = await stores.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM "${schema}".fleet f JOIN "${schema}".executions e USING (execution_id)
             WHERE f.queue = 'prio' AND f.admitted_at IS NOT NULL AND e.status = 'running'`,
          );
          samples++;
          maxPrio = Math.max(maxPrio, rows[0]!.n);
        } catch {
          // the server is restarting
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const WAIT = { timeout: 60_000, interval: 50 };
    const startsOf = async (like: string) =>
      (
        await stores.db.query<{ execution_id: string }>(
          `SELECT execution_id FROM "${schema}".step_starts WHERE execution_id LIKE $1 ORDER BY id`,
          [like],
        )
      ).rows.map((r) => r.execution_id);
    try {
      await createStepsTable(stores.db);
      // w1 hangs in every first step: what it admits is running when it is SIGKILLed.
      const first = await worker("w1", true);
      await app.submit(failoverFlow, { executionId: "p-blocker", input: null, queue: "prio" });
      await vi.waitFor(async () => expect(await startsOf("p-%")).toEqual(["p-blocker"]), WAIT);
      // Waiting behind the blocker's slot, across the crash and the restart: lower first, then submit order.
      const prioritized = [
        ["p-a5", 5],
        ["p-b5", 5],
        ["p-c1", 1],
        ["p-d", undefined],
        ["p-e9", 9],
        ["p-f1", 1],
      ] as const;
      for (const [id, priority] of prioritized)
        await app.submit(failoverFlow, {
          executionId: id,
          input: null,
          queue: "prio",
          ...(priority === undefined ? {} : { priority }),
        });
      const rated: string[] = [];
      for (let n = 0; n < 5; n++) for (const key of ["r0", "r1"]) rated.push(`${key}-${n}`);
      for (const id of rated)
        await app.submit(failoverFlow, { executionId: id, input: null, queue: "rated", key: keyOf(id) });
      // w1 (concurrency 4, the blocker one of them) admits three of them and hangs in their first steps.
      await vi.waitFor(async () => expect(await startsOf("r%")).toHaveLength(3), WAIT);
      first.child.kill("SIGKILL");
      await first.exited;
      const hung = await startsOf("r%");
      const { rows: now } = await stores.db.query<{ t: string }>(
        `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::text AS t`,
      );
      const killedAt = Number(now[0]!.t);
      if (server.owned) {
        await server.stop("immediate");
        await server.start();
      }
      await worker("w2", false);
      await worker("w3", false);
      const all = ["p-blocker", ...prioritized.map(([id]) => id), ...rated];
      const results = await Promise.all(all.map((id) => app.result(id)));
      expect(results).toHaveLength(all.length);
      sampling = false;
      await sampler;
      expect(samples).toBeGreaterThan(10);
      expect(maxPrio).toBe(1);

      const { rows: admitted } = await stores.db.query<{ execution_id: string; key: string | null; at: string }>(
        `SELECT execution_id, queue_key AS key, (extract(epoch FROM admitted_at) * 1000)::text AS at
         FROM "${schema}".fleet ORDER BY admitted_at`,
      );
      const at = new Map(admitted.map((r) => [r.execution_id, Number(r.at)]));
      // Priorities: after the blocker, by priority then submit order (each admitted once its slot was free).
      expect(admitted.filter((r) => r.execution_id.startsWith("p-")).map((r) => r.execution_id)).toEqual([
        "p-blocker",
        "p-d",
        "p-c1",
        "p-f1",
        "p-a5",
        "p-b5",
        "p-e9",
      ]);
      for (const key of ["r0", "r1"]) {
        const ofKey = admitted.filter((r) => r.key === key);
        expect(ofKey.map((r) => r.execution_id)).toEqual([0, 1, 2, 3, 4].map((n) => `${key}-${n}`));
        // No window of PERIOD holds more than 2 starts of the key: the third start after any is PERIOD later.
        const times = ofKey.map((r) => Number(r.at));
        for (let i = 0; i + 2 < times.length; i++) expect(times[i + 2]! - times[i]!).toBeGreaterThanOrEqual(PERIOD);
      }
      // Those w1 admitted kept their admission through the takeover and the restart (no new start)...
      for (const id of hung) expect(at.get(id)!).toBeLessThan(killedAt);
      // ... and their hung first steps ran again on the takeover (at least once); every other step ran once.
      const { rows: twice } = await stores.db.query<{ execution_id: string }>(
        `SELECT execution_id FROM "${schema}".step_starts GROUP BY execution_id, step_id HAVING count(*) > 1`,
      );
      expect(twice.map((r) => r.execution_id).sort()).toEqual(["p-blocker", ...hung].sort());
      const spread = rated.map((id) => at.get(id)!);
      console.log(
        `rate and priorities across a SIGKILL and a server restart: ${all.length} executions ended, ${samples} samples (at most ${maxPrio} running in prio), the rated ones started over ${Math.round(Math.max(...spread) - Math.min(...spread))} ms`,
      );
    } finally {
      sampling = false;
      await sampler;
      for (const child of children) child.child.kill("SIGKILL");
      await Promise.all(children.map((c) => c.exited));
      await app.close();
      await stores.close();
      await dropSchema(server.url, schema);
    }
  }, 120_000);
});
