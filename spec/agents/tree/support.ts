// A lead with a sub-agent tool, on the scripted model, for the tree-as-one-run suites (issue 34): the lead
// asks its researchers in parallel (one call per question), each researcher calls `search` then answers.
import {
  agentLoop$,
  agentTool,
  createLlmEffect,
  createToolEffect,
  scriptedModel,
  type EffectContext,
  type ModelRequest,
} from "../../../index.js";

export const lastUser = (request: ModelRequest) =>
  String([...request.messages].reverse().find((m) => m.role === "user")?.content ?? "");

export const researcher = agentLoop$({
  id: "researcher",
  model: "researchModel",
  tools: ["search"],
  warnTranscriptBytes: false,
});

export const lead = agentLoop$({
  id: "lead",
  model: "leadModel",
  warnTranscriptBytes: false,
  tools: [agentTool(researcher, { description: "Research one question" })],
});

/** Condition polling for tests: resolves once `ready()` holds, rejects after 10 s. */
export async function until(ready: () => boolean | Promise<boolean>, what = "the condition"): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export interface TreeEffectsOptions {
  /** The questions the lead asks, one sub-agent each. */
  questions?: string[];
  /** Runs before a researcher's answer (its second model call). */
  beforeAnswer?: (question: string) => Promise<void>;
  /** What `search` returns for a question. */
  search?: (q: string) => unknown;
  /** Whether `search` needs a human's approval. */
  approveSearch?: boolean;
  /** Whether a researcher streams its answer as two text deltas (`<question> `, then `found`), `beforeAnswer` between them. */
  streaming?: boolean;
  /** Whether each researcher's search call has an id of its own (`call-<question>`); without, the ids the runtime gives collide. */
  callIds?: boolean;
}

export function treeEffects(options: TreeEffectsOptions = {}) {
  const questions = options.questions ?? ["owls", "bats"];
  const calls = { lead: 0, research: 0, search: 0 };
  const effects = {
    leadModel: createLlmEffect(
      scriptedModel((request, call) => {
        calls.lead++;
        return call === 0
          ? { toolCalls: questions.map((prompt) => ({ toolName: "researcher", input: { prompt } })) }
          : {
              text: `summary: ${request.messages
                .filter((m) => m.role === "tool")
                .map((m) => JSON.stringify(m.content))
                .join(" | ")}`,
            };
      }),
    ),
    researchModel: createLlmEffect({
      id: "research",
      async generate(request: ModelRequest, ctx: EffectContext) {
        calls.research++;
        const question = lastUser(request);
        if (!request.messages.some((m) => m.role === "tool"))
          return {
            toolCalls: [
              { toolName: "search", input: { q: question }, ...(options.callIds ? { id: `call-${question}` } : {}) },
            ],
          };
        if (options.streaming) ctx.emitDelta?.({ type: "text-delta", delta: `${question} ` });
        await options.beforeAnswer?.(question);
        if (options.streaming) ctx.emitDelta?.({ type: "text-delta", delta: "found" });
        return { text: `${question} found` };
      },
    }),
    search: createToolEffect(
      async ({ q }: { q: string }) => (calls.search++, options.search ? options.search(q) : `${q}: by night`),
      options.approveSearch ? { needsApproval: true } : {},
    ),
  };
  return { calls, effects };
}
