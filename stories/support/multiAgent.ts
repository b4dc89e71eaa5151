// The agents of the multi-agent story: an orchestrator that delegates questions to researchers in parallel
// (agentTool: each a child execution) and hands the conversation to a writer (a handoff), on the scripted offline
// model. Deterministic: each scripted reply depends on the request only, so a run resumed after a crash gives the
// same answer as an uninterrupted one. Exported for the story, its test and the sub-agents bench.
import { z } from "zod";
import {
  agentLoop$,
  agentTool,
  createLlmEffect,
  createToolEffect,
  handoff,
  scriptedModel,
  tainted,
  type Effect,
  type EffectContext,
  type ModelReply,
  type ModelRequest,
} from "../../index.js";
import { latency, PAGES, search } from "./researchAgent.js";

/** The questions the orchestrator delegates, one researcher each (the bench takes the first n, or makes more). */
export const QUESTIONS = [
  "How do barn owls locate prey by hearing alone?",
  "What does the facial disc of a barn owl do?",
  "How do asymmetric ears give an owl elevation?",
  "Why is owl flight silent?",
];

/** A researcher: searches, reads the best page, answers in a sentence with its source. */
export const researcher = agentLoop$({
  id: "researcher",
  model: "researcherModel",
  system: "You research one question: search, read the best page, answer in one sentence citing its URL.",
  tools: [
    { name: "search", description: "Web search: { query } -> the top three { title, url, snippet }." },
    { name: "fetchPage", description: "Reads a page: { url } -> { title, text } (untrusted web content)." },
  ],
  maxTurns: 5,
  warnTranscriptBytes: false,
});

/** The writer: answers the user from the researchers' findings in the transcript it was handed. */
export const writer = agentLoop$({
  id: "writer",
  model: "writerModel",
  system: "You write the final answer from the research in the conversation, citing sources.",
  warnTranscriptBytes: false,
});

/** The orchestrator with `n` questions: delegates each to a researcher in one turn, then hands off to the writer. */
export function orchestrator(questions = 3) {
  return agentLoop$({
    id: "orchestrator",
    model: "orchestratorModel",
    system: `Split the user's question into ${questions} research questions, delegate each, then hand off to the writer.`,
    tools: [
      agentTool(researcher, {
        description: "Research one question; returns a one-sentence finding with its source.",
        inputSchema: z.object({ question: z.string() }),
      }),
    ],
    handoffs: [handoff(writer, { description: "Once every question has a finding: the writer answers the user." })],
    maxTurns: 4,
    warnTranscriptBytes: false,
  });
}

const lastUser = (request: ModelRequest) =>
  String([...request.messages].reverse().find((m) => m.role === "user")?.content ?? "");
const toolResults = (request: ModelRequest) => request.messages.filter((m) => m.role === "tool");
// A tool result as the model reads it: the text inside an <untrusted-data> fence, when it is one.
const unfenced = (content: unknown): unknown =>
  typeof content === "string" && content.startsWith("<untrusted-data")
    ? content.split("\n").slice(2, -1).join("\n")
    : content;
const usage = (input: number, output: number) => ({ inputTokens: input, outputTokens: output });

/** The orchestrator's replies: the delegation, then the handoff. */
export function orchestratorReply(questions: string[]) {
  return (request: ModelRequest): ModelReply =>
    toolResults(request).length === 0
      ? {
          text: `Delegating ${questions.length} questions.`,
          toolCalls: questions.map((question) => ({ toolName: "researcher", input: { question } })),
          usage: usage(180, 40 * questions.length),
        }
      : {
          text: "Every question has a finding; handing off to the writer.",
          toolCalls: [{ toolName: "transfer_to_writer", input: {} }],
          usage: usage(420, 12),
        };
}

/** A researcher's replies: search, then read the best page, then answer. */
export function researcherReply(request: ModelRequest): ModelReply {
  const question = lastUser(request);
  const results = toolResults(request);
  if (results.length === 0)
    return { toolCalls: [{ toolName: "search", input: { query: question } }], usage: usage(90, 14) };
  const url = topUrl(results[0]!.content);
  if (results.length === 1) return { toolCalls: [{ toolName: "fetchPage", input: { url } }], usage: usage(240, 16) };
  // The page it read (fenced for it as untrusted web content): its first sentence is the finding.
  const page = String(unfenced(results[1]!.content));
  const first = /"text":\s*"([^.]*\.)/.exec(page)?.[1] ?? page.slice(0, 120);
  return { text: `${first} [${url}]`, usage: usage(520, 38) };
}

// The first search hit's URL.
function topUrl(content: unknown): string {
  const hits = unfenced(content);
  const first: unknown = Array.isArray(hits) ? hits[0] : undefined;
  return typeof first === "object" && first !== null && "url" in first && typeof first.url === "string"
    ? first.url
    : PAGES[0]!.url;
}

/** The writer's reply: one paragraph from every finding the transcript holds. */
export function writerReply(request: ModelRequest): ModelReply {
  const findings = toolResults(request)
    .filter((m) => m.toolName === "researcher")
    .map((m) => String(unfenced(m.content)));
  return {
    text: `Barn owls hunt by ear. ${findings.map((f, i) => `(${i + 1}) ${f}`).join(" ")}`,
    usage: usage(380 + 60 * findings.length, 90),
  };
}

/** The effects of the story, with simulated latency (each call printed through `onCall` as it starts). */
export function multiAgentEffects(
  options: {
    modelMs?: number;
    toolMs?: number;
    questions?: string[];
    onCall?: (ctx: EffectContext) => void;
  } = {},
): Record<string, Effect> {
  const { modelMs = 120, toolMs = 60, questions = QUESTIONS.slice(0, 3), onCall } = options;
  // Each researcher takes a little longer than the one before, so their calls interleave.
  const slower = (ctx: EffectContext) => {
    const j = /tool:0:(\d+)/.exec(ctx.executionId)?.[1];
    return j === undefined ? 1 : 1 + Number(j) * 0.5;
  };
  const timed =
    <I, O>(ms: number, run: (input: I, ctx: EffectContext) => O | Promise<O>) =>
    async (input: I, ctx: EffectContext): Promise<O> => {
      onCall?.(ctx);
      if (ms > 0) await latency(ms * slower(ctx), ctx.signal);
      return run(input, ctx);
    };
  const llm = (reply: (request: ModelRequest) => ModelReply): Effect => {
    const effect = createLlmEffect(scriptedModel((request) => reply(request)));
    return { ...effect, run: timed(modelMs, (request, ctx) => effect.run(request, ctx)) };
  };
  return {
    orchestratorModel: llm(orchestratorReply(questions)),
    researcherModel: llm(researcherReply),
    writerModel: llm(writerReply),
    search: createToolEffect(timed(toolMs, ({ query }: { query: string }) => search(query))),
    // Web content is untrusted: tainted, so each agent fences it and the orchestrator learns the origin.
    fetchPage: createToolEffect(
      timed(toolMs, ({ url }: { url: string }) => {
        const page = PAGES.find((p) => p.url === url);
        return tainted(page ? { title: page.title, text: page.text } : { error: `404: ${url}` }, "web");
      }),
    ),
  };
}
