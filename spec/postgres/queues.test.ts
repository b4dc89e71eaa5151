// Queues on the fleet (flow control): a global and a per-key concurrency limit, a rate limit and priorities, enforced
// by the claim across workers; fairness between keys; a tree in a queue does not deadlock; bad input refused whole.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { ConfigError } from "../../actors/errors.js";
import { postgresStores } from "../../adapters/postgres/index.js";
import { memoryStores } from "../../stores/memory.js";
import { parent } from "../children/machines.js";
import { until } from "../support/harness.js";
import { failoverFlow } from "./failover.js";
import { startFleet } from "./workers.js";
import { countingEffects, keyOf, limitsRun } from "./queueRun.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

describe("queues on the fleet", () => {
  it("200 executions over 10 keys, perKey 1, concurrency 5, on 3 workers: limits never exceeded, all finish, order within a key kept", async () => {
    const run = await limitsRun(server, {
      keys: 10,
      perKeyCount: 20,
      workers: 3,
      concurrency: 5,
      perKey: 1,
      delayMs: 2,
    });
    expect(run.results).toHaveLength(200);
    expect(run.samples).toBeGreaterThan(5);
    expect(run.maxPerKey).toBe(1);
    expect(run.maxTotal).toBeLessThanOrEqual(5);
    expect(run.maxTotal).toBeGreaterThan(1); // the limit is a limit, not a queue of one
    for (let k = 0; k < 10; k++) {
      const ofKey = run.firstSteps.filter((id) => keyOf(id) === `k${k}`);
      expect(ofKey).toEqual([...ofKey].sort());
      expect(ofKey).toHaveLength(20);
    }
  }, 120_000);

  it("fairness: 200 submits on key A, then 1 on key B: B starts before A's queue drains", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const counting = countingEffects(1, gate);
    const f = await startFleet(server, {
      name: "fair",
      workers: 1,
      logics: [failoverFlow],
      effects: counting.effects,
      queues: { shared: { concurrency: 2 } },
    });
    try {
      for (let n = 0; n < 200; n++)
        await f.app.submit(failoverFlow, { executionId: `A-${n}`, input: null, queue: "shared", key: "A" });
      await f.app.submit(failoverFlow, { executionId: "B-0", input: null, queue: "shared", key: "B" });
      await until(() => counting.firstSteps.length === 2, 30_000);
      open();
      await f.app.result("B-0");
      const { rows } = await f.submitter.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${f.submitter.db.s}.fleet WHERE queue_key = 'A' AND admitted_at IS NULL`,
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
    } finally {
      await f.close();
    }
  }, 120_000);

  it("priorities: lower starts first; equal priorities in submit order", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const counting = countingEffects(0, gate);
    const f = await startFleet(server, {
      name: "prio",
      workers: 1,
      logics: [failoverFlow],
      effects: counting.effects,
      queues: { one: { concurrency: 1 } },
    });
    try {
      await f.app.submit(failoverFlow, { executionId: "x-first", input: null, queue: "one" });
      await until(() => counting.firstSteps.length === 1, 30_000);
      for (const [id, priority] of [
        ["a-p5", 5],
        ["b-p5", 5],
        ["c-p1", 1],
        ["d-none", undefined],
      ] as const)
        await f.app.submit(failoverFlow, {
          executionId: id,
          input: null,
          queue: "one",
          ...(priority === undefined ? {} : { priority }),
        });
      open();
      await Promise.all(["x-first", "a-p5", "b-p5", "c-p1", "d-none"].map((id) => f.app.result(id)));
      expect(counting.firstSteps).toEqual(["x-first", "d-none", "c-p1", "a-p5", "b-p5"]);
    } finally {
      await f.close();
    }
  }, 60_000);

  it("a rate limit: no more starts per key in a period than its limit", async () => {
    const counting = countingEffects(0);
    const f = await startFleet(server, {
      name: "rate",
      workers: 2,
      logics: [failoverFlow],
      effects: counting.effects,
      queues: { slow: { rate: { limit: 2, periodMs: 60_000 } } },
    });
    try {
      for (const id of ["r-1", "r-2", "r-3", "s-1"])
        await f.app.submit(failoverFlow, { executionId: id, input: null, queue: "slow", key: keyOf(id) });
      await Promise.all(["r-1", "r-2", "s-1"].map((id) => f.app.result(id)));
      // Two pollMs later, r-3 is still waiting: two starts of key r in the last minute.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const { rows } = await f.submitter.db.query<{ admitted: boolean }>(
        `SELECT admitted_at IS NOT NULL AS admitted FROM ${f.submitter.db.s}.fleet WHERE execution_id = 'r-3'`,
      );
      expect(rows[0]!.admitted).toBe(false);
      expect(counting.firstSteps).not.toContain("r-3");
    } finally {
      await f.close();
    }
  }, 60_000);

  it("a tree in a queue of concurrency 1 does not deadlock: a parked parent keeps its slot, its child is not queued", async () => {
    const f = await startFleet(server, {
      name: "qtree",
      workers: 1,
      concurrency: 1,
      logics: [parent],
      effects: { double: createToolEffect(async (x: number) => x * 2) },
      queues: { trees: { concurrency: 1 } },
    });
    try {
      for (const id of ["t1", "t2"]) await f.app.submit(parent, { executionId: id, queue: "trees" });
      for (const id of ["t1", "t2"])
        expect(await f.app.result(id)).toEqual({ seen: ["progress", "pong"], result: { doubled: 42 } });
    } finally {
      await f.close();
    }
  }, 60_000);
});

describe("queue options refused", () => {
  const flow = failoverFlow;
  const bad: [string, unknown, string, string][] = [
    ["concurrency 0", { q: { concurrency: 0 } }, "queues.q.concurrency", "got 0"],
    ["perKey 1.5", { q: { perKey: 1.5 } }, "queues.q.perKey", "got 1.5"],
    ["rate limit -1", { q: { rate: { limit: -1, periodMs: 1000 } } }, "queues.q.rate.limit", "got -1"],
    ["rate without periodMs", { q: { rate: { limit: 1 } } }, "queues.q.rate.periodMs", "got undefined"],
    ["an unknown option", { q: { perkey: 1 } }, "queues.q.perkey", '"perkey"'],
    ["a bad name", { "a b": {} }, "queues", '"a b"'],
  ];
  it.each(bad)(
    "defineConfig({ queues }) with %s: a ConfigError at createApp naming the value",
    (_, queues, path, shown) => {
      const error = (() => {
        try {
          createApp(defineConfig({ stores: memoryStores(), effects: {}, queues: queues as never }));
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect(error).toMatchObject({ path });
      expect((error as Error).message).toContain(shown);
    },
  );

  const badSubmits: [string, object, string, string][] = [
    ["an unknown queue", { queue: "nope" }, "submit.queue", '"nope"'],
    ["priority -1", { queue: "q", priority: -1 }, "submit.priority", "got -1"],
    ["priority 2^31", { queue: "q", priority: 2 ** 31 }, "submit.priority", "got 2147483648"],
    ["priority 1.5", { queue: "q", priority: 1.5 }, "submit.priority", "got 1.5"],
    ["a key without a queue", { key: "u1" }, "submit.key", '"u1"'],
    ["a priority without a queue", { priority: 1 }, "submit.priority", "1"],
    ["a key that is not a string", { queue: "q", key: 7 }, "submit.key", "got 7"],
  ];
  it.each(badSubmits)(
    "app.submit with %s: a ConfigError naming the value, nothing stored",
    async (_, extra, path, shown) => {
      const schema = freshSchema("qbad");
      const stores = await postgresStores({ url: server.url, schema });
      const app = createApp(defineConfig({ stores, effects: {}, queues: { q: { perKey: 1 } } }));
      const memory = createApp(defineConfig({ stores: memoryStores(), effects: {}, queues: { q: { perKey: 1 } } }));
      try {
        for (const target of [app, memory]) {
          const error = await target.submit(flow, { executionId: "e1", input: null, ...extra }).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error).toBeInstanceOf(ConfigError);
          expect(error).toMatchObject({ path });
          expect((error as Error).message).toContain(shown);
        }
        const counts = await stores.db.query<{ fleet: number; queues: number; records: number }>(
          `SELECT (SELECT count(*)::int FROM "${schema}".fleet) AS fleet, (SELECT count(*)::int FROM "${schema}".queues) AS queues,
                (SELECT count(*)::int FROM "${schema}".records) AS records`,
        );
        expect(counts.rows[0]).toEqual({ fleet: 0, queues: 0, records: 0 });
      } finally {
        await app.close();
        await memory.close();
        await stores.close();
        await dropSchema(server.url, schema);
      }
    },
  );
});
