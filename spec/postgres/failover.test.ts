// Failover at session end: a worker holds a session-level advisory lock for its lifetime, so a SIGKILLed worker's
// executions are taken over as soon as PostgreSQL ended its session, long before its lease would expire. A worker
// frozen with its session open (SIGSTOP) keeps its leases until they expire, as before.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createWorker, postgresStores, type PostgresStores, type Worker } from "../../adapters/postgres/index.js";
import { EXECUTION_STARTED, STEP_COMPLETED } from "../../stores/schema.js";
import { until } from "../support/harness.js";
import { createStepsTable, failoverEffects, failoverFlow, FAILOVER_STEPS, spawnFailoverWorker } from "./failover.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";
import type { LiveChild } from "../reliability/support.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

interface StepStart {
  step_id: string;
  worker: string;
  at: Date;
}

async function setUp(leaseMs: number) {
  const schema = freshSchema("failover");
  const stores = await postgresStores({ url: server.url, schema, pollMs: 100 });
  await createStepsTable(stores.db);
  const app = createApp(defineConfig({ stores, effects: {} }));
  const children: LiveChild[] = [];
  const workers: Worker[] = [];
  const workerStores: PostgresStores[] = [];
  return {
    stores,
    app,
    async spawn(name: string, hang: boolean, delayMs = 0) {
      const child = await spawnFailoverWorker({
        url: server.url,
        schema,
        name,
        leaseMs,
        sessionCheckMs: 500,
        hang,
        delayMs,
      });
      children.push(child);
      return child;
    },
    async survivor() {
      const own = await postgresStores({ url: server.url, schema, pollMs: 100 });
      workerStores.push(own);
      const worker = await createWorker({
        stores: own,
        logics: [failoverFlow],
        effects: failoverEffects(own.db, "survivor", false),
        leaseMs,
        pollMs: 100,
        signals: [],
      });
      workers.push(worker);
      return worker;
    },
    async starts(executionId: string): Promise<StepStart[]> {
      const { rows } = await stores.db.query<StepStart>(
        `SELECT step_id, worker, at FROM ${stores.db.s}.step_starts WHERE execution_id = $1 ORDER BY id`,
        [executionId],
      );
      return rows;
    },
    async now(): Promise<Date> {
      return (await stores.db.query<{ now: Date }>("SELECT clock_timestamp() AS now")).rows[0]!.now;
    },
    async close() {
      for (const child of children) child.child.kill("SIGKILL");
      await Promise.all(children.map((c) => c.exited));
      for (const worker of workers) await worker.stop();
      await app.close();
      for (const s of [...workerStores, stores]) await s.close();
      await dropSchema(server.url, schema);
    },
  };
}

describe("failover at session end", () => {
  it("a worker SIGKILLed mid-step: another worker starts its step long before the lease (60 s) would expire; fenced by epoch", async () => {
    const leaseMs = 60_000;
    const t = await setUp(leaseMs);
    try {
      const doomed = await t.spawn("doomed", true);
      await t.app.submit(failoverFlow, { executionId: "f1", input: null });
      await until(async () => (await t.starts("f1")).length === 1, 30_000);
      const survivor = await t.survivor();
      const { rows: before } = await t.stores.db.query<{ owner: string; epoch: string }>(
        `SELECT owner, epoch::text AS epoch FROM ${t.stores.db.s}.fleet WHERE execution_id = 'f1'`,
      );
      expect(before[0]).toEqual({ owner: "doomed", epoch: "1" });
      doomed.child.kill("SIGKILL");
      const killedAt = await t.now();
      await until(async () => (await t.starts("f1")).some((s) => s.worker === "survivor"), leaseMs);
      const takenOver = (await t.starts("f1")).find((s) => s.worker === "survivor")!;
      // The same step, started again by the survivor, well within the lease the dead worker held.
      expect(takenOver.step_id).toBe((await t.starts("f1"))[0]!.step_id);
      expect(takenOver.at.getTime() - killedAt.getTime()).toBeLessThan(leaseMs);
      expect(await t.app.result("f1")).toEqual({ steps: FAILOVER_STEPS });
      const { rows: after } = await t.stores.db.query<{ epoch: string }>(
        `SELECT epoch::text AS epoch FROM ${t.stores.db.s}.fleet WHERE execution_id = 'f1'`,
      );
      expect(Number(after[0]!.epoch)).toBeGreaterThan(1);
      const log = await t.app.log("f1");
      expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
      expect(log.filter((r) => r.type === EXECUTION_STARTED)).toHaveLength(1);
      expect(survivor.holding()).toEqual([]);
      // The dead worker's registration is gone; the survivor's stays.
      const { rows: registered } = await t.stores.db.query<{ worker_id: string }>(
        `SELECT worker_id FROM ${t.stores.db.s}.workers ORDER BY worker_id`,
      );
      expect(registered.map((r) => r.worker_id)).not.toContain("doomed");
    } finally {
      await t.close();
    }
  });

  it("a worker whose session is ended under it (the process lives) gives its executions up: taken over at once, its late outcome refused", async () => {
    const leaseMs = 60_000;
    const t = await setUp(leaseMs);
    try {
      const cut = await t.spawn("cut", false, 3_000);
      await t.app.submit(failoverFlow, { executionId: "f3", input: null });
      await until(async () => (await t.starts("f3")).length === 1, 30_000);
      await t.survivor();
      const { rowCount } = await t.stores.db.query(
        `SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN ${t.stores.db.s}.workers w
           ON l.locktype = 'advisory' AND l.objsubid = 2 AND l.objid::bigint = w.session_key
         WHERE w.worker_id = 'cut'`,
      );
      expect(rowCount).toBe(1);
      expect(await t.app.result("f3")).toEqual({ steps: FAILOVER_STEPS });
      const starts = await t.starts("f3");
      // The cut worker started its first step only: nothing more of the execution started there after the cut.
      expect(starts.filter((s) => s.worker === "cut")).toHaveLength(1);
      expect(starts.some((s) => s.worker === "survivor")).toBe(true);
      // Its step, still running at the cut, ended 3 s later: its outcome was refused at the append (the epoch fence).
      await cut.waitFor((out) => out.includes("lost f3"), 30_000);
      const log = await t.app.log("f3");
      expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
      expect(log.filter((r) => r.type === STEP_COMPLETED)).toHaveLength(FAILOVER_STEPS);
    } finally {
      await t.close();
    }
  });

  it("a worker frozen with its session open (SIGSTOP) keeps its lease until it expires; then another worker takes over", async () => {
    const leaseMs = 3_000;
    const t = await setUp(leaseMs);
    try {
      const frozen = await t.spawn("frozen", true);
      await t.app.submit(failoverFlow, { executionId: "f2", input: null });
      await until(async () => (await t.starts("f2")).length === 1, 30_000);
      await t.survivor();
      frozen.child.kill("SIGSTOP");
      const stoppedAt = await t.now();
      await until(async () => (await t.starts("f2")).some((s) => s.worker === "survivor"), 60_000);
      const takenOver = (await t.starts("f2")).find((s) => s.worker === "survivor")!;
      // The last heartbeat before the freeze was at most leaseMs / 3 earlier: the lease held at least 2/3 of leaseMs on.
      expect(takenOver.at.getTime() - stoppedAt.getTime()).toBeGreaterThanOrEqual((2 * leaseMs) / 3 - 50);
      expect(await t.app.result("f2")).toEqual({ steps: FAILOVER_STEPS });
    } finally {
      await t.close();
    }
  });
});
