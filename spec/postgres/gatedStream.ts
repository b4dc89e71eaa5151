// An agent whose model streams a few deltas, then waits for the test's gate: what a follower reads before the gate
// opens can only have come live from the worker that runs it (spec/postgres/streams.test.ts, followCli.test.ts).
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createToolEffect, type Effect } from "../../actors/effects/effect.js";

/** The answer of turn 1, streamed in chunks of 8. */
export const ANSWER = "The owl hunts by sound, and its ears sit at different heights.";

export const gatedAgent = agentLoop$({
  id: "streamer",
  model: "model",
  tools: ["search"],
  maxTurns: 3,
  warnTranscriptBytes: false,
});

/**
 * The model of turn 0 says "Looking it up." and calls the tool; turn 1 streams the answer in chunks of 8, and after
 * the first two waits for the execution's gate in `gates`. With `approval`, the tool's calls wait for a human.
 */
export function gatedEffects(gates: Map<string, Promise<void>>, approval = false): Record<string, Effect> {
  return {
    model: createLlmEffect({
      id: "gated-model",
      async generate(_request, ctx) {
        const emit = (delta: { type: string; [key: string]: unknown }) => ctx.emitDelta?.(delta as never);
        const turn = Number(/#turn:(\d+):model$/.exec(ctx.stepId)?.[1] ?? 0);
        if (turn === 0) {
          const call = { id: `call-${ctx.executionId}`, toolName: "search", input: { q: "owls" } };
          emit({ type: "text-delta", delta: "Looking it up." });
          emit({ type: "tool-call", ...call });
          return { text: "Looking it up.", toolCalls: [call] };
        }
        for (let i = 0; i < ANSWER.length; i += 8) {
          if (i === 16) await gates.get(ctx.executionId);
          emit({ type: "text-delta", delta: ANSWER.slice(i, i + 8) });
        }
        return { text: ANSWER };
      },
    }),
    search: createToolEffect(async () => ({ hits: ["owls hear in three dimensions"] }), { needsApproval: approval }),
  };
}

/** A gate: `opened` resolves once `open` is called. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  return { opened: new Promise<void>((resolve) => (open = resolve)), open };
}
