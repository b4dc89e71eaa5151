// Sub-agents on the fleet (issue 34, "Crashes"): trees of agents (an orchestrator, two researchers by agentTool, a
// writer by handoff) on worker processes with concurrency 1 each, a real AI SDK provider against the loopback server;
// the worker that reaches a kill point SIGKILLs itself there (mid-model-call in a researcher, mid-tool in another, a
// researcher ended but not yet delivered, mid-handoff) and a fresh worker replaces it. Each tree ends with the
// uninterrupted answer; a step with a recorded outcome ran once, or twice when its first run was killed mid-call;
// every log's seqs are contiguous; the agents of a tree ran on several workers. Waits on conditions only.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { postgresStores } from "../../adapters/postgres/index.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import { LiveChild } from "../reliability/support.js";
import { orchestrator, treeReply, TREE_ANSWER } from "../support/agentTree.js";
import { startOpenAiServer, type OpenAiServer } from "../support/openaiServer.js";
import type { AgentKillPoint } from "./agentTreeWorker.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

const WORKERS = 3;
const WORKER_SCRIPT = fileURLToPath(new URL("./agentTreeWorker.ts", import.meta.url));

// One tree per point.
const POINTS: AgentKillPoint[] = [
  { name: "researcher mid-model-call", executionId: "a-model/tool:0:0", stepId: "researcher#turn:1:model" },
  { name: "researcher mid-tool", executionId: "a-tool/tool:0:1", stepId: "researcher#turn:0:tool:0" },
  { name: "researcher ended, not delivered", executionId: "a-ended/tool:0:0" },
  { name: "mid-handoff", executionId: "a-handoff/handoff", stepId: "writer#turn:0:model" },
];
const rootOf = (point: AgentKillPoint) => point.executionId.split("/")[0]!;

let server: PgServer;
let model: OpenAiServer;
beforeAll(async () => {
  server = await startPostgres();
  model = await startOpenAiServer(treeReply);
});
afterAll(async () => {
  await model?.close();
  await server?.dispose();
});

describe("sub-agents on the fleet, worker processes SIGKILLed mid-tree (real provider)", () => {
  it("each tree gives the uninterrupted answer; no recorded call re-run; seqs contiguous; agents on several workers", async () => {
    const schema = freshSchema("agents");
    const stores = await postgresStores({ url: server.url, schema, pollMs: 100 });
    const s = `"${schema}"`;
    await stores.db.query(
      `CREATE TABLE ${s}.side_effects (id bigserial PRIMARY KEY, idempotency_key text NOT NULL, execution_id text NOT NULL, step_id text NOT NULL, worker text NOT NULL);
       CREATE TABLE ${s}.kills (point text PRIMARY KEY, execution_id text NOT NULL, worker text NOT NULL)`,
    );
    const app = createApp(defineConfig({ stores, effects: {} }));
    const workers = new Map<string, LiveChild>();
    let generation = 0;
    let closing = false;
    const spawnWorker = async (): Promise<void> => {
      const name = `w${generation++}`;
      const config = { url: server.url, schema, name, baseURL: model.baseURL, points: POINTS };
      const child = new LiveChild(
        spawn(process.execPath, ["--import", "tsx", WORKER_SCRIPT, JSON.stringify(config)], {
          stdio: ["ignore", "pipe", "pipe"],
        }),
      );
      workers.set(name, child);
      // A worker that dies is replaced by a fresh one, as a supervisor would.
      void child.exited.then(() => {
        if (!closing) spawnWorker().catch(() => undefined);
      });
      await child.waitFor((out) => out.includes(`ready ${name}`), 60_000);
    };
    const diagnose = async () => {
      const q = async (sql: string) => JSON.stringify((await stores.db.query(sql)).rows);
      return new Error(
        `stalled: executions ${await q(`SELECT execution_id, status, head FROM ${s}.executions ORDER BY 1`)}; fleet ${await q(
          `SELECT execution_id, owner, epoch, waiting_on FROM ${s}.fleet ORDER BY 1`,
        )}; kills ${await q(`SELECT * FROM ${s}.kills`)}; workers ${[...workers]
          .map(([name, c]) => `${name}: ${c.stdout.slice(-500)} ${c.stderr.slice(-500)}`)
          .join(" | ")}`,
      );
    };
    try {
      for (let n = 0; n < WORKERS; n++) await spawnWorker();
      const roots = POINTS.map(rootOf);
      for (const root of roots)
        await app.submit(orchestrator, { executionId: root, input: { prompt: "How do owls and bats hunt?" } });
      let stalled: ReturnType<typeof setTimeout> | undefined;
      const outputs = await Promise.race([
        Promise.all(roots.map((root) => app.result(root))),
        new Promise<never>((_, reject) => {
          stalled = setTimeout(() => void diagnose().then(reject, reject), 150_000);
        }),
      ]).finally(() => clearTimeout(stalled));
      for (const output of outputs) expect(output).toMatchObject({ text: TREE_ANSWER, lastAgent: "writer" });

      const kills = (await stores.db.query<{ point: string }>(`SELECT point FROM ${s}.kills`)).rows.map((k) => k.point);
      expect(kills.sort()).toEqual(POINTS.map((p) => p.name).sort());
      const runs = (
        await stores.db.query<{ step: string; n: number }>(
          `SELECT execution_id || ' ' || step_id AS step, count(*)::int AS n FROM ${s}.side_effects GROUP BY 1`,
        )
      ).rows;
      const killedAt = new Set(POINTS.filter((p) => p.stepId).map((p) => `${p.executionId} ${p.stepId}`));
      const spread: number[] = [];
      for (const root of roots) {
        const tree = await app.executions({ root });
        expect(tree.map((info) => info.executionId)).toEqual([
          root,
          `${root}/handoff`,
          `${root}/tool:0:0`,
          `${root}/tool:0:1`,
        ]);
        const byWorker = new Set<string>();
        for (const { executionId: id } of tree) {
          const log = await app.log(id);
          expect(
            log.map((r) => r.seq),
            `${id}: seqs contiguous`,
          ).toEqual(log.map((_, i) => i + 1));
          const outcomes = log.filter((r) => r.type === STEP_COMPLETED && r.effectId !== "loom.child");
          expect(new Set(outcomes.map((r) => r.stepId)).size, `${id}: an outcome journaled twice`).toBe(
            outcomes.length,
          );
          // Ran once; twice only where the first run was killed mid-call (it had no outcome): nothing recorded re-ran.
          for (const record of outcomes) {
            const step = `${id} ${String(record.stepId)}`;
            expect(runs.find((r) => r.step === step)?.n, `${step}: runs`).toBe(killedAt.has(step) ? 2 : 1);
          }
          for (const [name, child] of workers)
            if (child.stdout.split("\n").some((line) => line.startsWith(`append ${name} ${id} `))) byWorker.add(name);
        }
        spread.push(byWorker.size);
      }
      expect(Math.max(...spread)).toBeGreaterThan(1);
      console.log(
        `agents on the fleet: ${roots.length} trees, ${kills.length} SIGKILLs, ${generation} worker processes; workers per tree ${spread.join(", ")}; model and tool runs ${runs.reduce((sum, r) => sum + r.n, 0)}`,
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
