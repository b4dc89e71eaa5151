// What the fleet suites share: the agent they submit (a model that calls a tool every turn until its last,
// decided by the step id so any worker gives the same reply), effects that log every live call, and two
// machines that wait for an inbox event (one with a timer that keeps firing meanwhile).
import type pg from "pg";
import { assign, setup } from "xstate";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createToolEffect, type Effect } from "../../actors/effects/effect.js";
import { toolOutput } from "../support/workload.js";

export const AGENT_TURNS = 4;
export const fleetAgent = agentLoop$({
  id: "fleet-agent",
  model: "model",
  tools: ["search"],
  maxTurns: AGENT_TURNS + 1,
  warnTranscriptBytes: false,
});

/** A one-turn agent that answers with its model's text (the streams across processes: spec/postgres/streams.test.ts, bench/streamsAcross.ts). */
export const streamingAgent = agentLoop$({
  id: "streamer",
  model: "model",
  tools: [],
  maxTurns: 1,
  warnTranscriptBytes: false,
});

/** One live call of an effect: the step, and the idempotency key the runtime gave it. */
export interface LiveCall {
  executionId: string;
  stepId: string;
  idempotencyKey: string;
}

/** The agent's effects; `onCall` sees every live call (before it returns), `delayMs` slows each one. */
export function fleetEffects(
  onCall: (call: LiveCall, kind: "model" | "tool") => void | Promise<void> = () => undefined,
  delayMs = 0,
): Record<string, Effect> {
  const pause = () => (delayMs > 0 ? new Promise((resolve) => setTimeout(resolve, delayMs)) : Promise.resolve());
  return {
    model: createLlmEffect({
      id: "fleet-model",
      async generate(_request, ctx) {
        await onCall({ executionId: ctx.executionId, stepId: ctx.stepId, idempotencyKey: ctx.idempotencyKey }, "model");
        await pause();
        const turn = Number(/#turn:(\d+):model$/.exec(ctx.stepId)?.[1] ?? 0);
        if (turn < AGENT_TURNS - 1)
          return { toolCalls: [{ toolName: "search", input: { q: `${ctx.executionId} topic ${turn}` } }] };
        return { text: `answer for ${ctx.executionId} after ${AGENT_TURNS} turns` };
      },
    }),
    search: createToolEffect(async (_input: unknown, ctx) => {
      await onCall({ executionId: ctx.executionId, stepId: ctx.stepId, idempotencyKey: ctx.idempotencyKey }, "tool");
      await pause();
      const turn = Number(/turn:(\d+):tool/.exec(ctx.stepId)?.[1] ?? 0);
      return { ...toolOutput(7, turn), rows: toolOutput(7, turn).rows.slice(0, 4), for: ctx.executionId };
    }),
  };
}

/** The output every fleet agent execution must end with. */
export const referenceAnswer = (executionId: string) => `answer for ${executionId} after ${AGENT_TURNS} turns`;

/** A machine that waits for APPROVE from its first state (no step, no timer): what it ends with says the event was delivered. */
export const approvalMachine = setup({
  types: {} as { events: { type: "APPROVE" }; output: { approved: true } },
}).createMachine({
  id: "approval",
  initial: "waiting",
  states: { waiting: { on: { APPROVE: "done" } }, done: { type: "final" } },
  output: () => ({ approved: true as const }),
});

/**
 * A machine with a durable timer that fires again and again (every second, counted) while it waits for
 * APPROVE, and counts the NOTEs it gets meanwhile: a timer's append, another event's append and an inbox
 * event's append of the same execution can meet.
 */
export const tickingMachine = setup({
  types: {} as {
    context: { ticks: number; notes: number };
    events: { type: "APPROVE" } | { type: "NOTE" };
    output: { ticks: number; notes: number; approved: true };
  },
}).createMachine({
  id: "ticking",
  context: { ticks: 0, notes: 0 },
  initial: "waiting",
  states: {
    waiting: {
      on: { APPROVE: "done", NOTE: { actions: assign({ notes: ({ context }) => context.notes + 1 }) } },
      after: {
        1000: { target: "waiting", reenter: true, actions: assign({ ticks: ({ context }) => context.ticks + 1 }) },
      },
    },
    done: { type: "final" },
  },
  output: ({ context }) => ({ ticks: context.ticks, notes: context.notes, approved: true as const }),
});

/**
 * Sessions waiting for a lock on the fleet's schema, seen from outside (a prepared statement waiting in Bind
 * still shows the text of the one before, so they are told apart by the locks they hold and want):
 * `look`, the worker's read of the catalogue before it journals an inbox event (AccessShareLock on
 * executions, holding nothing on the fleet table, as the claim does); `append`, an append (RowExclusiveLock
 * on executions); `barrier`, a statement waiting for an advisory lock the test holds.
 */
export async function lockWaits(
  client: pg.Client,
  schema: string,
  what: "look" | "append" | "barrier",
): Promise<number[]> {
  const s = `"${schema}"`;
  const { rows } = await client.query<{ pid: number }>(
    `SELECT l.pid FROM pg_locks l WHERE NOT l.granted AND CASE $1
       WHEN 'barrier' THEN l.locktype = 'advisory'
       WHEN 'append' THEN l.relation = '${s}.executions'::regclass AND l.mode = 'RowExclusiveLock'
       ELSE l.relation = '${s}.executions'::regclass AND l.mode = 'AccessShareLock'
         AND NOT EXISTS (SELECT 1 FROM pg_locks g WHERE g.pid = l.pid AND g.granted AND g.relation = '${s}.fleet'::regclass) END`,
    [what],
  );
  return rows.map((r) => r.pid);
}

/** The advisory lock key of `holdApprovals`' barrier. */
export const APPROVE_BARRIER = 31031;

/**
 * Barrier B of the inbox tests: from now on an append journaling an APPROVE waits inside its statement (a
 * trigger on the records) while `gate` holds the advisory lock APPROVE_BARRIER. Returns its removal.
 */
export async function holdApprovals(client: pg.Client, gate: pg.Client, schema: string): Promise<() => Promise<void>> {
  const s = `"${schema}"`;
  await client.query(
    `CREATE FUNCTION ${s}.hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock(${APPROVE_BARRIER}); RETURN NEW; END $$`,
  );
  await client.query(
    `CREATE TRIGGER hold BEFORE INSERT ON ${s}.records FOR EACH ROW WHEN (NEW.body LIKE '%"type":"APPROVE"%') EXECUTE FUNCTION ${s}.hold()`,
  );
  await gate.query("SELECT pg_advisory_lock($1)", [APPROVE_BARRIER]);
  return async () => {
    await gate.query("SELECT pg_advisory_unlock($1)", [APPROVE_BARRIER]);
    await client.query(`DROP TRIGGER hold ON ${s}.records`);
  };
}
