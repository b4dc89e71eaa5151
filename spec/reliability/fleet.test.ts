// Campaign 17, the fleet on PostgreSQL (docs/reliability.md): worker processes over one real server.
// (a) 3 workers, executions submitted from this process, workers SIGKILLed at seeded random times and
//     restarted, the server stopped with `-m immediate` and started again mid-run: every execution ends
//     with the reference output, seqs contiguous, every step outcome recorded once, every tool side effect
//     at most twice and exactly once after dedupe by idempotency key.
// (b) a worker frozen (SIGSTOP) past its lease, then continued: 0 of its appends accepted, and the fleet
//     finishes its executions.
// (c) a worker that stops itself right after an append, continued once another worker took the execution
//     over and finished it: it starts none of the steps that append scheduled.
// (d) a worker SIGKILLed between a durable timer's append and the append of an inbox event it was
//     delivering (barriers in the database put it there): the event is still in the inbox, and the worker
//     that claims the execution next journals it once.
import { readFile } from "node:fs/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, type App } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { postgresStores, type PostgresStores } from "../../adapters/postgres/index.js";
import { EVENT_RECEIVED, STEP_COMPLETED } from "../../stores/schema.js";
import { until } from "../support/harness.js";
import { prng } from "../support/workload.js";
import {
  AGENT_TURNS,
  fleetAgent,
  holdApprovals,
  lockWaits,
  referenceAnswer,
  tickingMachine,
} from "../postgres/fleet.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "../postgres/server.js";
import { cases, LiveChild, removeTempDirs, spawnChild, timeout } from "./support.js";

const EXECUTIONS = cases("FLEET_EXECUTIONS", 36, 240);
const KILLS = cases("FLEET_KILLS", 3, 20);
const LEASE_MS = 1_500;
// Between two disruptions: a lease to expire, the takeover's poll, and a step.
const GAP_MS = LEASE_MS + 800;
const SEED = Number(process.env.LOOMWORK_SEED ?? 9);

let server: PgServer;
beforeAll(async () => {
  // Its own cluster even when LOOMWORK_PG_URL is set: the campaign stops and starts the server.
  server = await startPostgres({ external: false });
});
afterAll(async () => {
  await server?.dispose();
  await removeTempDirs();
});

interface Fleet {
  schema: string;
  stores: PostgresStores;
  app: App;
  children: Map<string, LiveChild>;
  spawn(
    name: string,
    options?: { delayMs?: number; concurrency?: number; freezeAfterModelOf?: string; simulated?: boolean },
  ): Promise<LiveChild>;
  close(): Promise<void>;
}

async function openFleet(): Promise<Fleet> {
  const schema = freshSchema("camp");
  const stores = await postgresStores({ url: server.url, schema, pollMs: 100 });
  await stores.db.query(
    `CREATE TABLE "${schema}".side_effects (id bigserial PRIMARY KEY, idempotency_key text NOT NULL, execution_id text NOT NULL, step_id text NOT NULL, worker text NOT NULL)`,
  );
  const app = createApp(defineConfig({ stores, effects: {} }));
  const children = new Map<string, LiveChild>();
  return {
    schema,
    stores,
    app,
    children,
    async spawn(name, options = {}) {
      const config = {
        url: server.url,
        schema,
        name,
        leaseMs: LEASE_MS,
        delayMs: options.delayMs ?? 250,
        concurrency: options.concurrency ?? 2,
        freezeAfterModelOf: options.freezeAfterModelOf,
        simulated: options.simulated,
      };
      const child = new LiveChild(await spawnChild("fleetWorker.ts", [JSON.stringify(config)]));
      children.set(name, child);
      await child.waitFor((out) => out.includes(`ready ${name}`), 30_000);
      return child;
    },
    async close() {
      for (const child of children.values()) child.child.kill("SIGKILL");
      await Promise.all([...children.values()].map((c) => c.exited));
      await app.close();
      await stores.close();
      await dropSchema(server.url, schema);
    },
  };
}

/** Waits for every result; the submitter's own connections come back after a server restart. */
async function results(app: App, ids: string[]): Promise<string[]> {
  return Promise.all(ids.map(async (id) => ((await app.result(id)) as { text: string }).text));
}

async function checkJournals(f: Fleet, ids: string[]): Promise<void> {
  for (const id of ids) {
    const log = await f.stores.events.read(id);
    expect(
      log.map((r) => r.seq),
      id,
    ).toEqual(log.map((_, i) => i + 1));
    const steps = log.filter((r) => r.type === STEP_COMPLETED).map((r) => String(r.stepId));
    expect(new Set(steps).size, `${id}: a step outcome recorded twice`).toBe(steps.length);
    expect(steps).toHaveLength(2 * AGENT_TURNS - 1);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the fleet on PostgreSQL", () => {
  it(
    `${EXECUTIONS} executions over 3 workers, ${KILLS} SIGKILLs and restarts, one immediate server restart`,
    async () => {
      const f = await openFleet();
      try {
        const names = ["w0", "w1", "w2"];
        for (const name of names) await f.spawn(name);
        const ids = Array.from({ length: EXECUTIONS }, (_, i) => `c17-${i}`);
        for (const id of ids) await f.app.submit(fleetAgent, { executionId: id, input: { prompt: id } });
        const outputs = results(f.app, ids);
        const random = prng(SEED);
        let generation = 0;
        const unfinished: number[] = [];
        let atRestart = 0;
        const running = async () =>
          Number(
            (
              await f.stores.db.query<{ n: number }>(
                `SELECT count(*)::int AS n FROM "${f.schema}".executions WHERE status = 'running'`,
              )
            ).rows[0]!.n,
          );
        const disruptions = (async () => {
          for (let k = 0; k < KILLS; k++) {
            // Disruptions are spaced by more than a lease and a step: a step is in flight at one of them at most,
            // so it runs at most twice (once per disruption that catches it in flight, plus its first run).
            await sleep(k === 0 ? 300 + Math.floor(random() * 500) : GAP_MS + Math.floor(random() * 500));
            const victim = names[Math.floor(random() * names.length)]!;
            const child = f.children.get(victim)!;
            unfinished.push(await running());
            child.child.kill("SIGKILL");
            await child.exited;
            const name = `${victim.slice(0, 2)}.${++generation}`;
            names[names.indexOf(victim)] = name;
            await f.spawn(name);
            if (k === Math.floor((KILLS - 1) / 2)) {
              // Mid-run: the server dies as in a crash (no checkpoint) and comes back on the same port.
              atRestart = await running();
              await server.stop("immediate");
              await sleep(500);
              await server.start();
              await sleep(GAP_MS);
            }
          }
        })();
        await disruptions;
        // Each disruption hit a fleet with work in flight.
        expect(
          unfinished.every((n) => n > 0),
          `executions running at each kill: ${unfinished}`,
        ).toBe(true);
        expect(atRestart).toBeGreaterThan(0);
        expect(await outputs).toEqual(ids.map(referenceAnswer));
        await checkJournals(f, ids);
        const { rows } = await f.stores.db.query<{ key: string; step: string; n: number }>(
          `SELECT idempotency_key AS key, execution_id || '/' || step_id AS step, count(*)::int AS n FROM "${f.schema}".side_effects GROUP BY 1, 2`,
        );
        const toolSteps = EXECUTIONS * (AGENT_TURNS - 1);
        expect(new Set(rows.map((r) => r.key)).size, "exactly once after dedupe by idempotency key").toBe(toolSteps);
        expect(new Set(rows.map((r) => r.step)).size).toBe(toolSteps);
        const worst = Math.max(...rows.map((r) => r.n));
        const twice = rows.filter((r) => r.n === 2).length;
        console.log(
          `campaign 17a: ${EXECUTIONS} executions, ${KILLS} kills, 1 immediate restart (executions running at the kills: ${unfinished.join(", ")}; at the restart: ${atRestart}); tool side effects ${rows.reduce((a, r) => a + r.n, 0)} for ${toolSteps} steps (${twice} run twice, worst ${worst})`,
        );
        const over = rows.filter((r) => r.n > 2).map((r) => r.step);
        const detail = over.length
          ? (
              await f.stores.db.query(
                `SELECT execution_id, step_id, worker, id FROM "${f.schema}".side_effects WHERE execution_id || '/' || step_id = ANY($1) ORDER BY id`,
                [over],
              )
            ).rows
          : [];
        expect(worst, `a tool side effect ran more than twice: ${JSON.stringify(detail)}`).toBeLessThanOrEqual(2);
      } finally {
        await f.close();
      }
    },
    timeout(90_000, 900_000),
  );

  it(
    "a worker frozen (SIGSTOP) past its lease and continued: 0 of its appends accepted, the fleet finishes",
    async () => {
      const f = await openFleet();
      try {
        // Slow tools: the frozen worker is inside one when it stops, and appends its outcome once continued.
        const frozen = await f.spawn("frozen", { delayMs: 400, concurrency: 8 });
        const ids = Array.from({ length: 4 }, (_, i) => `c17s-${i}`);
        for (const id of ids) await f.app.submit(fleetAgent, { executionId: id, input: { prompt: id } });
        await frozen.waitFor((out) => ids.every((id) => out.includes(`append ${id} `)), 30_000);
        frozen.child.kill("SIGSTOP");
        await sleep(200);
        const mark = frozen.stdout.length;
        await f.spawn("rescuer", { delayMs: 50, concurrency: 8 });
        await sleep(LEASE_MS * 2.5);
        frozen.child.kill("SIGCONT");
        expect(await results(f.app, ids)).toEqual(ids.map(referenceAnswer));
        await sleep(LEASE_MS);
        const after = frozen.stdout.slice(mark);
        const accepted = after.split("\n").filter((line) => line.startsWith("append "));
        const lost = after.split("\n").filter((line) => line.startsWith("lost "));
        console.log(
          `campaign 17b: frozen worker after SIGCONT: ${accepted.length} appends accepted, ${lost.length} executions refused for a lost lease`,
        );
        expect(accepted).toEqual([]);
        expect(lost.length).toBeGreaterThan(0);
        await checkJournals(f, ids);
      } finally {
        await f.close();
      }
    },
    timeout(60_000, 120_000),
  );

  it(
    "a worker frozen right after an append and continued after a takeover starts no step that append scheduled",
    async () => {
      const f = await openFleet();
      try {
        const frozen = await f.spawn("frozen", { delayMs: 50, concurrency: 1, freezeAfterModelOf: "c17p" });
        await f.app.submit(fleetAgent, { executionId: "c17p", input: { prompt: "c17p" } });
        // It stops itself between the append of its first model reply and the tool step that reply asks for.
        await frozen.waitFor((out) => out.includes("frozen c17p"), 30_000);
        await until(
          async () => (await readFile(`/proc/${frozen.child.pid}/stat`, "utf8")).split(") ")[1]!.startsWith("T"),
          10_000,
        );
        // Its lease runs out; the rescuer claims the execution and finishes it.
        await f.spawn("rescuer", { delayMs: 50 });
        expect(await results(f.app, ["c17p"])).toEqual([referenceAnswer("c17p")]);
        frozen.child.kill("SIGCONT");
        await frozen.waitFor((out) => out.includes("lost c17p"), 30_000);
        const { rows } = await f.stores.db.query<{ worker: string; step: string }>(
          `SELECT worker, step_id AS step FROM "${f.schema}".side_effects ORDER BY id`,
        );
        console.log(
          `campaign 17c: after SIGCONT the frozen worker started ${rows.filter((r) => r.worker === "frozen").length} steps; tool side effects: ${JSON.stringify(rows)}`,
        );
        expect(
          rows.filter((r) => r.worker === "frozen"),
          "a step the frozen worker started after it lost its lease",
        ).toEqual([]);
        expect(new Set(rows.map((r) => r.step)).size).toBe(AGENT_TURNS - 1);
        await checkJournals(f, ["c17p"]);
      } finally {
        await f.close();
      }
    },
    timeout(60_000, 120_000),
  );

  it(
    "a worker SIGKILLed after a timer's append and before the inbox event's: the event is still in the inbox and the next worker journals it",
    async () => {
      const f = await openFleet();
      const barrier = new pg.Client({ connectionString: server.url });
      const gate = new pg.Client({ connectionString: server.url });
      await barrier.connect();
      await gate.connect();
      const s = `"${f.schema}"`;
      const waiting = (what: "look" | "append" | "barrier") => lockWaits(barrier, f.schema, what);
      const inbox = async () =>
        Number((await barrier.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${s}.inbox`)).rows[0]!.n);
      const journaled = async () =>
        (await f.stores.events.read("c17i"))
          .filter((r) => r.type === EVENT_RECEIVED)
          .map((r) => (r.event as { type: string }).type);
      const TIMER = "xstate.after.1000.ticking.waiting";
      try {
        const victim = await f.spawn("victim", { simulated: true, concurrency: 1 });
        await f.app.submit(tickingMachine, { executionId: "c17i" });
        await until(
          async () => (await barrier.query(`SELECT 1 FROM ${s}.fleet WHERE owner = 'victim'`)).rowCount === 1,
          30_000,
        );
        const openB = await holdApprovals(barrier, gate, f.schema);
        // Barrier A holds the worker's look at the execution once it has read the APPROVE from the inbox.
        await barrier.query(`BEGIN; LOCK TABLE ${s}.executions IN ACCESS EXCLUSIVE MODE`);
        await f.stores.send("c17i", { type: "APPROVE" });
        await until(async () => (await waiting("look")).length > 0, 30_000);
        // Meanwhile the durable timer fires; its append queues behind barrier A and commits once it opens.
        victim.child.kill("SIGUSR2");
        await until(async () => (await waiting("append")).length > 0, 30_000);
        await barrier.query("COMMIT");
        // The inbox event's append waits at barrier B: between the two writes, the worker is killed.
        await until(async () => (await waiting("barrier")).length > 0, 30_000);
        expect(await journaled()).toEqual([TIMER]);
        victim.child.kill("SIGKILL");
        await victim.exited;
        // The server sees the dead client only when it writes to it: its statement is ended here, uncommitted.
        for (const pid of await waiting("barrier")) await barrier.query("SELECT pg_terminate_backend($1)", [pid]);
        await openB();
        const afterKill = { inbox: await inbox(), journaled: await journaled() };
        console.log(
          `campaign 17d: after the kill between the timer's append and the event's: ${afterKill.inbox} inbox message(s), journaled ${JSON.stringify(afterKill.journaled)}`,
        );
        expect(afterKill, "the APPROVE that stores.send acknowledged is lost").toEqual({
          inbox: 1,
          journaled: [TIMER],
        });
        await f.spawn("heir", { simulated: true });
        expect(await f.app.result("c17i")).toEqual({ ticks: 1, notes: 0, approved: true });
        expect(await journaled()).toEqual([TIMER, "APPROVE"]);
        expect(await inbox()).toBe(0);
      } finally {
        await gate.end();
        await barrier.end();
        await f.close();
      }
    },
    timeout(60_000, 120_000),
  );

  it(
    "SIGTERM drains a worker: it stops claiming, exits 0, and what it could not finish is given back at once",
    async () => {
      const f = await openFleet();
      try {
        const worker = await f.spawn("term", { delayMs: 300, concurrency: 2 });
        const ids = Array.from({ length: 4 }, (_, i) => `c17t-${i}`);
        for (const id of ids) await f.app.submit(fleetAgent, { executionId: id, input: { prompt: id } });
        await worker.waitFor((out) => out.includes("append c17t-"), 30_000);
        worker.child.kill("SIGTERM");
        // drainMs is 2 s: the worker ends within it plus its release, not a lease later.
        expect(await worker.exited).toBe(0);
        const { rows } = await f.stores.db.query<{ owner: string | null }>(`SELECT owner FROM "${f.schema}".fleet`);
        expect(rows.every((r) => r.owner === null)).toBe(true);
        await f.spawn("after");
        expect(await results(f.app, ids)).toEqual(ids.map(referenceAnswer));
        await checkJournals(f, ids);
      } finally {
        await f.close();
      }
    },
    timeout(60_000, 120_000),
  );
});
