// The fleet in one process on a real server: app.submit, workers that claim (exactly one runs each
// execution), leases that fence appends, the inbox, durable timers, drain and takeover.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { simulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import {
  createWorker,
  LeaseLostError,
  postgresStores,
  type PostgresStores,
  type Worker,
  type WorkerOptions,
} from "../../adapters/postgres/index.js";
import { ConcurrencyError } from "../../stores/errors.js";
import { EVENT_RECEIVED, EXECUTION_ENDED, EXECUTION_STARTED, STEP_COMPLETED } from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import { countedDemoEffects, until } from "../support/harness.js";
import { demoMachine } from "../support/demoMachine.js";
import {
  approvalMachine,
  fleetAgent,
  fleetEffects,
  holdApprovals,
  lockWaits,
  referenceAnswer,
  tickingMachine,
  type LiveCall,
} from "./fleet.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";
import { started, step } from "../conformance/suite.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

/** A schema of its own, stores for the submitter and for each worker (each a process of its own would). */
async function fleet(
  workers: number,
  options: { leaseMs?: number; concurrency?: number; drainMs?: number; app?: WorkerOptions["app"] } = {},
) {
  const schema = freshSchema("fleet");
  const open = () => postgresStores({ url: server.url, schema, pollMs: 100 });
  const submitterStores = await open();
  const calls: (LiveCall & { worker: number; kind: string })[] = [];
  const running: Worker[] = [];
  const workerStores: PostgresStores[] = [];
  const startWorker = async (n: number) => {
    const stores = await open();
    workerStores.push(stores);
    const worker = await createWorker({
      stores,
      logics: [fleetAgent, demoMachine, approvalMachine, tickingMachine],
      effects: {
        ...fleetEffects((call, kind) => void calls.push({ ...call, worker: n, kind })),
        ...countedDemoEffects().effects,
      },
      concurrency: options.concurrency ?? 4,
      leaseMs: options.leaseMs ?? 2_000,
      pollMs: 100,
      drainMs: options.drainMs ?? 5_000,
      signals: [],
      ...(options.app ? { app: options.app } : {}),
    });
    running.push(worker);
    return worker;
  };
  for (let n = 0; n < workers; n++) await startWorker(n);
  // The submitter (a web server, a CLI) registers no effects: they run on the workers.
  const app = createApp(defineConfig({ stores: submitterStores, effects: {} }));
  return {
    schema,
    app,
    stores: submitterStores,
    calls,
    workers: running,
    startWorker,
    async close() {
      for (const worker of running) await worker.stop();
      await app.close();
      for (const stores of [...workerStores, submitterStores]) await stores.close();
      await dropSchema(server.url, schema);
    },
  };
}

describe("the fleet on PostgreSQL", () => {
  it("app.submit journals the start and runs nothing; one worker of two runs it; app.result resolves in the submitter", async () => {
    const f = await fleet(2);
    try {
      await f.app.submit(fleetAgent, { executionId: "a1", input: { prompt: "owls" } });
      await f.app.submit(fleetAgent, { executionId: "a1", input: { prompt: "owls" } }); // idempotent by id
      const output = (await f.app.result("a1")) as { text: string };
      expect(output.text).toBe(referenceAnswer("a1"));
      const log = await f.app.log("a1");
      expect(log.filter((r) => r.type === EXECUTION_STARTED)).toHaveLength(1);
      expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
      const workersThatRan = new Set(f.calls.filter((c) => c.executionId === "a1").map((c) => c.worker));
      expect(workersThatRan.size).toBe(1);
      // Every step ran live exactly once.
      const steps = f.calls.map((c) => c.stepId);
      expect(new Set(steps).size).toBe(steps.length);
      expect(log.filter((r) => r.type === STEP_COMPLETED)).toHaveLength(steps.length);
    } finally {
      await f.close();
    }
  });

  it("30 submitted executions over 3 workers: each completes once, no step runs twice, work is shared", async () => {
    const f = await fleet(3, { concurrency: 3 });
    try {
      const ids = Array.from({ length: 30 }, (_, i) => `many-${i}`);
      for (const id of ids) await f.app.submit(fleetAgent, { executionId: id, input: { prompt: id } });
      const outputs = (await Promise.all(ids.map((id) => f.app.result(id)))) as { text: string }[];
      expect(outputs.map((o) => o.text)).toEqual(ids.map(referenceAnswer));
      const keys = f.calls.map((c) => `${c.executionId}/${c.stepId}`);
      expect(new Set(keys).size).toBe(keys.length);
      expect(new Set(f.calls.map((c) => c.worker)).size).toBeGreaterThan(1);
    } finally {
      await f.close();
    }
  });

  it("delivers an event sent from another process through the inbox, journaled once", async () => {
    const f = await fleet(2);
    try {
      await f.app.submit(demoMachine, { executionId: "d1", input: { topic: "owls" } });
      await until(async () => (await f.app.log("d1")).some((r) => r.type === STEP_COMPLETED), 10_000);
      await f.stores.send("d1", { type: "APPROVE" });
      expect(await f.app.result("d1")).toMatchObject({ approved: true });
      const received = (await f.app.log("d1")).filter((r) => r.type === EVENT_RECEIVED);
      expect(received).toHaveLength(1);
      expect((await f.stores.db.query(`SELECT count(*)::int AS n FROM "${f.schema}".inbox`)).rows[0]).toEqual({ n: 0 });
    } finally {
      await f.close();
    }
  });

  it("delivers inbox messages that were waiting before the worker claimed their executions", async () => {
    // No worker yet: each execution is submitted and its approval put in its inbox, so the claim and the
    // first look at the inbox come before the resume has finished, on every one of them.
    const f = await fleet(0);
    try {
      const ids = Array.from({ length: 12 }, (_, i) => `early-${i}`);
      for (const id of ids) {
        await f.app.submit(approvalMachine, { executionId: id });
        await f.stores.send(id, { type: "APPROVE" });
      }
      await f.startWorker(0);
      const parked = async () =>
        (
          await f.stores.db.query<{ id: string }>(
            `SELECT execution_id AS id FROM "${f.schema}".executions WHERE status = 'running' ORDER BY 1`,
          )
        ).rows.map((r) => r.id);
      await until(async () => (await parked()).length === 0, 30_000).catch(async () => {
        throw new Error(`still waiting for their approval 30 s after the claim: ${(await parked()).join(", ")}`);
      });
      for (const id of ids) expect(await f.app.result(id)).toEqual({ approved: true });
      expect((await f.stores.db.query(`SELECT count(*)::int AS n FROM "${f.schema}".inbox`)).rows[0]).toEqual({ n: 0 });
    } finally {
      await f.close();
    }
  });

  it.each([
    ["a durable timer firing", "timer"],
    ["an event sent in the worker's own app", "send"],
  ] as const)(
    "deletes an inbox message only in the append that journals its event: %s meanwhile leaves it, and a crash before the event's append loses nothing",
    async (_, interloper) => {
      // The worker's clock is the test's: the timer fires when the test says, at the moment it chooses.
      const clock = simulatedClock(Date.now());
      const f = await fleet(1, { app: { clock } });
      const barrier = new pg.Client({ connectionString: server.url });
      const gate = new pg.Client({ connectionString: server.url });
      await barrier.connect();
      await gate.connect();
      const s = `"${f.schema}"`;
      const waiting = (what: "look" | "append" | "barrier") => lockWaits(barrier, f.schema, what);
      try {
        await f.app.submit(tickingMachine, { executionId: "tk" });
        // Claimed and resumed: the worker armed the execution's timer, beside its schedule runner's (on the same clock).
        await until(() => f.workers[0]!.holding().includes("tk") && clock.pendingTimers() >= 2, 20_000);
        // Barrier B: an append journaling APPROVE waits inside its statement until the test lets it go.
        const openB = await holdApprovals(barrier, gate, f.schema);
        // Barrier A: the catalogue locked, so the worker's look at the execution before it journals the event waits.
        await barrier.query(`BEGIN; LOCK TABLE ${s}.executions IN ACCESS EXCLUSIVE MODE`);
        await f.stores.send("tk", { type: "APPROVE" });
        await until(async () => (await waiting("look")).length > 0, 20_000);
        // While the worker holds the message, another event of the same execution comes first; its append
        // queues behind the lock too.
        let local = Promise.resolve();
        if (interloper === "timer")
          clock.advance(Date.now() - clock.now() + 1_000); // past the timer's due time: submitted at most now
        else local = (await f.workers[0]!.app.resume("tk")).sendAsync({ type: "NOTE" });
        await until(async () => (await waiting("append")).length > 0, 20_000);
        await barrier.query("COMMIT");
        // The other event's macrostep commits; the inbox event's append waits at barrier B, not yet journaled.
        await until(async () => (await waiting("barrier")).length > 0, 20_000);
        const journaled = async () =>
          (await f.app.log("tk"))
            .filter((r) => r.type === EVENT_RECEIVED)
            .map((r) => (r.event as { type: string }).type);
        await local;
        const first = interloper === "timer" ? "xstate.after.1000.ticking.waiting" : "NOTE";
        expect(await journaled()).toEqual([first]);
        const inbox = async () =>
          Number((await barrier.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${s}.inbox`)).rows[0]!.n);
        expect(await inbox(), "the APPROVE message is still in the inbox while its event is not journaled").toBe(1);
        // The APPROVE append never commits: its statement is cut off with its connection, as when the worker
        // dies there (campaign 17d SIGKILLs a worker process at this point).
        for (const pid of await waiting("barrier")) await barrier.query("SELECT pg_terminate_backend($1)", [pid]);
        await openB();
        expect(await inbox()).toBe(1);
        // Once its lease expires the execution is claimed again and the message, still there, is journaled.
        expect(await f.app.result("tk")).toEqual({
          ticks: interloper === "timer" ? 1 : 0,
          notes: interloper === "send" ? 1 : 0,
          approved: true,
        });
        expect(await journaled()).toEqual([first, "APPROVE"]);
        expect(await inbox()).toBe(0);
      } finally {
        await gate.end();
        await barrier.end();
        await f.close();
      }
    },
  );

  it("fires a durable timer on the worker holding the lease", async () => {
    const f = await fleet(1);
    try {
      await f.app.submit(demoMachine, { executionId: "t1", input: { topic: "dusk" } });
      expect(await f.app.result("t1")).toMatchObject({
        approved: false,
        notes: ["notes on dusk", "draft(notes on dusk)"],
      });
    } finally {
      await f.close();
    }
  });

  it("a drained worker gives its leases back and another worker resumes from the journal, re-running nothing recorded", async () => {
    // A lease of a minute: only the release at stop lets the second worker in this soon.
    const f = await fleet(1, { leaseMs: 60_000, drainMs: 0 });
    try {
      await f.app.submit(demoMachine, { executionId: "w1", input: { topic: "moth" } });
      await until(async () => (await f.app.log("w1")).some((r) => r.type === STEP_COMPLETED), 10_000);
      expect(f.workers[0]!.holding()).toEqual(["w1"]);
      // It waits for APPROVE or its 1 s timer; the worker stops without waiting (drainMs 0) and gives it back.
      await f.workers[0]!.stop();
      expect((await f.stores.events.getExecution("w1"))?.status).toBe("running");
      await f.startWorker(1);
      // The second worker re-arms the journaled timer: it fires there, and the research step is not run again.
      expect(await f.app.result("w1")).toMatchObject({
        approved: false,
        notes: ["notes on moth", "draft(notes on moth)"],
      });
      const completed = (await f.app.log("w1")).filter((r) => r.type === STEP_COMPLETED).map((r) => r.stepId);
      expect(completed).toHaveLength(2);
      expect(new Set(completed).size).toBe(2);
    } finally {
      await f.close();
    }
  });

  it("fences every append by the lease: after expiry and takeover the old holder's append is refused", async () => {
    const schema = freshSchema("fence");
    const stores = await postgresStores({ url: server.url, schema });
    try {
      await stores.fleet.enqueue("x");
      await stores.events.append("x", 0, [started(1)]);
      const s = `"${schema}"`;
      const claim = async (owner: string) =>
        (
          await stores.db.query<{ epoch: string }>(
            `UPDATE ${s}.fleet SET owner = $1, epoch = epoch + 1, lease_until = clock_timestamp() + interval '1 hour' WHERE execution_id = 'x' RETURNING epoch::text AS epoch`,
            [owner],
          )
        ).rows[0]!.epoch;
      const epochA = await claim("A");
      const asA = stores.events.withHooks({
        fence: () => ({ owner: "A", epoch: epochA }),
        inboxMessage: () => undefined,
        consumed: () => undefined,
      });
      await asA.append("x", 1, [step(2)]);
      await stores.db.query(
        `UPDATE ${s}.fleet SET lease_until = clock_timestamp() - interval '1 second' WHERE execution_id = 'x'`,
      );
      await expect(asA.append("x", 2, [step(3)])).rejects.toBeInstanceOf(LeaseLostError);
      const epochB = await claim("B");
      const asB = stores.events.withHooks({
        fence: () => ({ owner: "B", epoch: epochB }),
        inboxMessage: () => undefined,
        consumed: () => undefined,
      });
      await expect(asA.append("x", 2, [step(3)])).rejects.toBeInstanceOf(LeaseLostError);
      await asB.append("x", 2, [step(3)]);
      await expect(asB.append("x", 2, [step(3)])).rejects.toBeInstanceOf(ConcurrencyError);
      expect((await stores.events.read("x")).map((r) => r.seq)).toEqual([1, 2, 3]);
    } finally {
      await stores.close();
      await dropSchema(server.url, schema);
    }
  });

  it("an end appended under the lease gives the lease back in the same statement; an end without one leaves the lease", async () => {
    const schema = freshSchema("endrel");
    const stores = await postgresStores({ url: server.url, schema });
    try {
      const s = `"${schema}"`;
      const ended = (seq: number): StoredRecord => ({
        seq,
        at: seq,
        type: EXECUTION_ENDED,
        status: "done",
        output: {},
      });
      const row = async (id: string) =>
        (
          await stores.db.query<{ owner: string | null; lease: boolean }>(
            `SELECT owner, lease_until IS NOT NULL AS lease FROM ${s}.fleet WHERE execution_id = $1`,
            [id],
          )
        ).rows[0];
      for (const id of ["x", "y"]) {
        await stores.fleet.enqueue(id);
        await stores.events.append(id, 0, [started(1)]);
        await stores.db.query(
          `UPDATE ${s}.fleet SET owner = 'A', epoch = 7, lease_until = clock_timestamp() + interval '1 hour' WHERE execution_id = $1`,
          [id],
        );
      }
      const asA = stores.events.withHooks({
        fence: () => ({ owner: "A", epoch: "7" }),
        inboxMessage: () => undefined,
        consumed: () => undefined,
      });
      await asA.append("x", 1, [step(2)]);
      expect(await row("x")).toEqual({ owner: "A", lease: true }); // not the end: still held
      await asA.append("x", 2, [ended(3)]);
      expect(await row("x")).toEqual({ owner: null, lease: false });
      // Ended by an append without the lease (an app that is no worker): the holder gives it back itself.
      await stores.events.append("y", 1, [ended(2)]);
      expect(await row("y")).toEqual({ owner: "A", lease: true });
    } finally {
      await stores.close();
      await dropSchema(server.url, schema);
    }
  });

  it("app.submit refuses stores without a fleet, and app.result of an unsubmitted execution still resumes it here", async () => {
    const { memoryStores } = await import("../../stores/memory.js");
    const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));
    await expect(app.submit(demoMachine, { executionId: "m", input: { topic: "x" } })).rejects.toThrow(
      /postgresStores/,
    );
    await app.close();
  });
});
