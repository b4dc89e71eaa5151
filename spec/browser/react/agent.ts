// The agent of the React and bridge pages: three turns (search, read two pages, answer), each model and
// tool call taking a moment, so a reload lands mid-run. Every call that runs is counted in localStorage
// (which survives the reload) under the page load that ran it.
import { agentLoop$, createLlmEffect, createToolEffect, scriptedModel, type Effect } from "../../../index.js";

export const digest = agentLoop$({
  id: "digest",
  model: "model",
  tools: ["search", "read"],
  warnTranscriptBytes: false,
});

const pause = (ms: number) => new Promise((settle) => setTimeout(settle, ms));

/** `ran(stepId)` is told before each call runs. */
export function digestEffects(ran: (stepId: string) => void, ms = 400): Record<string, Effect> {
  const llm = createLlmEffect(
    scriptedModel([
      { toolCalls: [{ toolName: "search", input: { q: "barn owls" } }] },
      {
        toolCalls: [
          { toolName: "read", input: { page: 1 } },
          { toolName: "read", input: { page: 2 } },
        ],
      },
      { text: "Barn owls hunt by ear: they strike prey in total darkness." },
    ]),
  );
  return {
    model: { ...llm, run: async (request, ctx) => (ran(ctx.stepId), await pause(ms), llm.run(request, ctx)) },
    search: createToolEffect(
      async ({ q }: { q: string }, ctx) => (ran(ctx.stepId), await pause(ms), [`${q}: page 1`, `${q}: page 2`]),
    ),
    read: createToolEffect(
      async ({ page }: { page: number }, ctx) => (
        ran(ctx.stepId),
        await pause(ms),
        `page ${page}: owls locate prey by sound`
      ),
    ),
  };
}
