// What the fleet suites share: the agent they submit (a model that calls a tool every turn until its last,
// decided by the step id so any worker gives the same reply), effects that log every live call, and a
// server per suite.
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createToolEffect, type Effect } from "../../actors/effects/effect.js";
import { toolOutput } from "../support/workload.js";

export const AGENT_TURNS = 4;
export const fleetAgent = agentLoop$({ id: "fleet-agent", model: "model", tools: ["search"], maxTurns: AGENT_TURNS + 1, warnTranscriptBytes: false });

/** One live call of an effect: the step, and the idempotency key the runtime gave it. */
export interface LiveCall {
  executionId: string;
  stepId: string;
  idempotencyKey: string;
}

/** The agent's effects; `onCall` sees every live call (before it returns), `delayMs` slows each one. */
export function fleetEffects(onCall: (call: LiveCall, kind: "model" | "tool") => void | Promise<void> = () => undefined, delayMs = 0): Record<string, Effect> {
  const pause = () => (delayMs > 0 ? new Promise((resolve) => setTimeout(resolve, delayMs)) : Promise.resolve());
  return {
    model: createLlmEffect({
      id: "fleet-model",
      async generate(_request, ctx) {
        await onCall({ executionId: ctx.executionId, stepId: ctx.stepId, idempotencyKey: ctx.idempotencyKey }, "model");
        await pause();
        const turn = Number(/#turn:(\d+):model$/.exec(ctx.stepId)?.[1] ?? 0);
        if (turn < AGENT_TURNS - 1) return { toolCalls: [{ toolName: "search", input: { q: `${ctx.executionId} topic ${turn}` } }] };
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
