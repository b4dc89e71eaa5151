// What the failover suite and bench share: a three-step flow whose every step records its start in the database (the
// worker, the step, the database's clock), and a worker process (failoverWorker.ts) that may hang in its first step
// so that it can be SIGKILLed (or SIGSTOPped) mid-step.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { setup, type AnyStateMachine } from "xstate";
import { createTaskEffect, type Effect } from "../../actors/effects/effect.js";
import { effectActor } from "../../machines/helpers/effectActor.js";
import type { PgDatabase } from "../../adapters/postgres/database.js";
import { LiveChild } from "../reliability/support.js";

export const FAILOVER_STEPS = 3;

const states: Record<string, object> = {};
for (let i = 0; i < FAILOVER_STEPS; i++) {
  states[`s${i}`] = {
    invoke: {
      src: "step",
      id: `step${i}`,
      input: { i },
      onDone: { target: i + 1 < FAILOVER_STEPS ? `s${i + 1}` : "done" },
    },
  };
}
states.done = { type: "final" };

export const failoverFlow: AnyStateMachine = setup({
  actors: { step: effectActor<{ i: number }, { i: number }>() },
}).createMachine({
  id: "failover-flow",
  initial: "s0",
  states,
  output: () => ({ steps: FAILOVER_STEPS }),
} as never) as unknown as AnyStateMachine;

/** The table each step's start is recorded in (created by `createStepsTable`). */
export const createStepsTable = (db: PgDatabase) =>
  db.query(
    `CREATE TABLE IF NOT EXISTS ${db.s}.step_starts (id bigserial PRIMARY KEY, execution_id text NOT NULL, step_id text NOT NULL, worker text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`,
  );

/**
 * The flow's effect: records the step's start; `hang`: a first step never returns (the worker is to be killed there);
 * `delayMs`: each step takes this long.
 */
export function failoverEffects(db: PgDatabase, worker: string, hang: boolean, delayMs = 0): Record<string, Effect> {
  return {
    step: createTaskEffect(async (input: { i: number }, ctx) => {
      await db.query(`INSERT INTO ${db.s}.step_starts (execution_id, step_id, worker) VALUES ($1, $2, $3)`, [
        ctx.executionId,
        ctx.stepId,
        worker,
      ]);
      if (hang) await new Promise(() => undefined);
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return { i: input.i };
    }),
  };
}

const WORKER_SCRIPT = fileURLToPath(new URL("./failoverWorker.ts", import.meta.url));

/** Options of one worker process (failoverWorker.ts). */
export interface FailoverWorkerConfig {
  url: string;
  schema: string;
  name: string;
  leaseMs: number;
  /** createWorker's sessionCheckMs: false for the lease path alone. */
  sessionCheckMs: number | false;
  hang: boolean;
  /** Each step takes this long. */
  delayMs?: number;
}

/** Starts a worker process and resolves once it is ready to claim. */
export async function spawnFailoverWorker(config: FailoverWorkerConfig): Promise<LiveChild> {
  const child = new LiveChild(
    spawn(process.execPath, ["--import", "tsx", WORKER_SCRIPT, JSON.stringify(config)], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NODE_NO_WARNINGS: "1" },
    }),
  );
  await child.waitFor((out) => out.includes(`ready ${config.name}`), 60_000);
  return child;
}
