// The fleet's crash campaign for children (docs/reliability.md, campaign 26): worker processes (concurrency 1 each,
// so a tree's executions run on several of them) over a real server, one tree per kill point, every worker armed
// with every point; the worker that reaches a point SIGKILLs itself there (once in the campaign) and a fresh worker
// replaces it. Points: between the parent's spawn record and the child's start; mid-child with a message in the
// child's outbox; with a message in the parent's outbox; between the child's end and the parent's outcome; right
// before the parent journals a child's outcome. Each tree ends with the output of an uninterrupted run, no recorded
// step of any execution runs again (every effect run counted, no dedupe), every message is journaled once by its
// receiver, and every log's seqs are contiguous. Waits on conditions only, never on sleeps.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { postgresStores } from "../../adapters/postgres/index.js";
import { EVENT_RECEIVED, EXECUTION_ENDED, STEP_COMPLETED } from "../../stores/schema.js";
import { LiveChild } from "../reliability/support.js";
import { killPoints, tree, treeOutput, type KillPoint } from "./treeFleet.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

const LEASE_MS = 1_500;
const WORKERS = 3;
const WORKER_SCRIPT = fileURLToPath(new URL("./treeWorker.ts", import.meta.url));

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

describe("child executions on the fleet, worker processes SIGKILLed at every crossing (campaign 26)", () => {
  it("each tree resumes to the same output; no recorded step re-run, no message lost or twice, seqs contiguous", async () => {
    const schema = freshSchema("tree");
    const stores = await postgresStores({ url: server.url, schema, pollMs: 100 });
    const s = `"${schema}"`;
    await stores.db.query(
      `CREATE TABLE ${s}.side_effects (id bigserial PRIMARY KEY, idempotency_key text NOT NULL, execution_id text NOT NULL, step_id text NOT NULL, worker text NOT NULL);
       CREATE TABLE ${s}.kills (point text PRIMARY KEY, execution_id text NOT NULL, worker text NOT NULL)`,
    );
    const app = createApp(defineConfig({ stores, effects: {} }));
    const roots = Object.keys(killPoints).map((point) => `t-${point}`);
    const points: KillPoint[] = Object.values(killPoints).map((at, i) => at(roots[i]!));
    const workers = new Map<string, LiveChild>();
    let generation = 0;
    let closing = false;
    const deaths: string[] = [];
    const spawnWorker = async (armed: boolean): Promise<void> => {
      const name = `w${generation++}`;
      const config = { url: server.url, schema, name, leaseMs: LEASE_MS, points: armed ? points : [] };
      const child = new LiveChild(
        spawn(process.execPath, ["--import", "tsx", WORKER_SCRIPT, JSON.stringify(config)], {
          stdio: ["ignore", "pipe", "pipe"],
        }),
      );
      workers.set(name, child);
      // A worker that dies (at a kill point) is replaced by a fresh one, as a supervisor would.
      void child.exited.then(() => {
        if (closing) return;
        deaths.push(name);
        // A replacement that fails to start shows as a stall (diagnosed below); one killed at the close is expected.
        spawnWorker(true).catch(() => undefined);
      });
      await child.waitFor((out) => out.includes(`ready ${name}`), 60_000);
    };
    const diagnose = async () => {
      const q = async (sql: string) => JSON.stringify((await stores.db.query(sql)).rows);
      return new Error(
        `stalled: executions ${await q(`SELECT execution_id, status, head FROM ${s}.executions ORDER BY 1`)}; fleet ${await q(
          `SELECT execution_id, owner, epoch, lease_until > clock_timestamp() AS leased, waiting_on FROM ${s}.fleet ORDER BY 1`,
        )}; inbox ${await q(`SELECT execution_id, event FROM ${s}.inbox`)}; kills ${await q(`SELECT * FROM ${s}.kills`)}; workers ${[
          ...workers,
        ]
          .map(([name, c]) => `${name}: ${c.stdout.slice(-600)} ${c.stderr.slice(-600)}`)
          .join(" | ")}`,
      );
    };
    try {
      for (let n = 0; n < WORKERS; n++) await spawnWorker(true);
      for (const [i, root] of roots.entries()) await app.submit(tree, { executionId: root, input: { base: i } });
      const all = Promise.all(roots.map((root) => app.result(root)));
      let stalled: ReturnType<typeof setTimeout> | undefined;
      const outputs = await Promise.race([
        all,
        new Promise<never>((_, reject) => {
          // A stall is reported with what the database and the workers say, not as a bare timeout.
          stalled = setTimeout(() => void diagnose().then(reject, reject), 150_000);
        }),
      ]).finally(() => clearTimeout(stalled));
      expect(outputs).toEqual(roots.map((_, i) => treeOutput(i)));

      // Every point was reached, once, by a worker that then died there.
      const kills = (await stores.db.query<{ point: string; worker: string }>(`SELECT point, worker FROM ${s}.kills`))
        .rows;
      expect(kills.map((k) => k.point).sort()).toEqual(points.map((p) => `${p.name}:${p.executionId}`).sort());
      for (const kill of kills) expect(deaths, `${kill.point}: its worker died`).toContain(kill.worker);

      const effects = (
        await stores.db.query<{ step: string; n: number; keys: number }>(
          `SELECT execution_id || ' ' || step_id AS step, count(*)::int AS n, count(DISTINCT idempotency_key)::int AS keys FROM ${s}.side_effects GROUP BY 1`,
        )
      ).rows;
      const spread: number[] = [];
      for (const root of roots) {
        const ids = [root, `${root}/a`, `${root}/b`];
        const byWorker = new Set<string>();
        for (const id of ids) {
          const log = await app.log(id);
          expect(
            log.map((r) => r.seq),
            `${id}: seqs contiguous`,
          ).toEqual(log.map((_, i) => i + 1));
          expect(log.filter((r) => r.type === EXECUTION_ENDED).map((r) => r.status)).toEqual(["done"]);
          const outcomes = log.filter((r) => r.type === STEP_COMPLETED).map((r) => String(r.stepId));
          expect(new Set(outcomes).size, `${id}: a step outcome journaled twice`).toBe(outcomes.length);
          // Each effect step journaled here ran exactly once (every run counted, no dedupe): none ran again on a resume.
          for (const record of log.filter((r) => r.type === STEP_COMPLETED && r.effectId !== "loom.child")) {
            const ran = effects.find((e) => e.step === `${id} ${String(record.stepId)}`);
            expect(ran?.n, `${id} ${String(record.stepId)}: effect runs`).toBe(1);
          }
          // Messages: each journaled once by its receiver (by sender and message id).
          const received = log.flatMap((r) =>
            r.type === EVENT_RECEIVED && typeof r.from === "object" && r.from !== null && "messageId" in r.from
              ? [String(r.from.messageId)]
              : [],
          );
          expect(new Set(received).size, `${id}: a message journaled twice`).toBe(received.length);
          expect(received, `${id}: messages received`).toHaveLength(id === root ? 2 : 1);
          for (const [name, child] of workers)
            if (child.stdout.split("\n").some((line) => line.startsWith(`append ${name} ${id} `))) byWorker.add(name);
        }
        spread.push(byWorker.size);
      }
      expect(
        effects.reduce((sum, e) => sum + e.n, 0),
        "effect runs",
      ).toBe(roots.length * 3);
      // The trees' executions ran on several workers (each has concurrency 1).
      expect(Math.max(...spread)).toBeGreaterThan(1);
      console.log(
        `campaign 26: ${roots.length} trees, ${kills.length} SIGKILLs (${kills.map((k) => k.point.split(":")[0]).join(", ")}), ${generation} worker processes; workers per tree ${spread.join(", ")}; effect runs ${effects.reduce((sum, e) => sum + e.n, 0)} for ${roots.length * 3} steps`,
      );
    } finally {
      closing = true;
      for (const child of workers.values()) child.child.kill("SIGKILL");
      await Promise.all([...workers.values()].map((c) => c.exited));
      await app.close();
      await stores.close();
      await dropSchema(server.url, schema);
    }
  }, 240_000);
});
