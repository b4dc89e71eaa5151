// Sub-agents (issue 34): the multi-agent story's tree (an orchestrator delegating n questions to researchers in
// parallel, each a child execution, then a handoff to a writer) against a single agent doing the same tool calls
// itself, on memory stores with no model latency: the time of a run (interleaved, medians), the journal bytes of
// every log (exact), and how the tree's time grows with the number of sub-agents.
import { agentLoop$, createApp, createLlmEffect, defineConfig, memoryStores, scriptedModel } from "../index.js";
import type { ModelReply, ModelRequest } from "../index.js";
import { interleave, medianSample, ratioOf, span, type Sample } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { bytes, ratios, type Section } from "./report.js";
import { multiAgentEffects, orchestrator, QUESTIONS } from "../stories/support/multiAgent.js";
import { search } from "../stories/support/researchAgent.js";

const PROMPT = "How do barn owls catch prey in complete darkness?";

/** `n` questions: the story's four, then more of the same. */
function questionsOf(n: number): string[] {
  return Array.from(
    { length: n },
    (_, i) => `${QUESTIONS[i % QUESTIONS.length]!}${i >= QUESTIONS.length ? ` (${i})` : ""}`,
  );
}

/** One agent doing the tree's tool calls itself: every search in one turn, every page read in the next, then the answer. */
const single = agentLoop$({
  id: "single",
  model: "singleModel",
  tools: ["search", "fetchPage"],
  maxTurns: 5,
  warnTranscriptBytes: false,
});

function singleReply(questions: string[]) {
  return (request: ModelRequest): ModelReply => {
    const results = request.messages.filter((m) => m.role === "tool");
    if (results.length === 0)
      return { toolCalls: questions.map((query) => ({ toolName: "search", input: { query } })) };
    if (results.length === questions.length)
      return {
        toolCalls: questions.map((query) => ({ toolName: "fetchPage", input: { url: search(query)[0]!.url } })),
      };
    return { text: `Barn owls hunt by ear (${results.length} sources).` };
  };
}

async function runOnce(n: number, shape: "tree" | "single"): Promise<Sample & { bytes: number; steps: number }> {
  const questions = questionsOf(n);
  const effects = {
    ...multiAgentEffects({ modelMs: 0, toolMs: 0, questions }),
    singleModel: createLlmEffect(scriptedModel(singleReply(questions))),
  };
  const stores = memoryStores();
  const app = createApp(defineConfig({ stores, effects }));
  const logic = shape === "tree" ? orchestrator(n) : single;
  const end = span();
  await app.start(logic, { executionId: "r", input: { prompt: PROMPT } });
  await app.result("r");
  const sample = end();
  let total = 0;
  let steps = 0;
  for (const info of await stores.events.listExecutions()) {
    total += (await app.stats(info.executionId)).logBytes;
    steps += (await app.log(info.executionId)).filter((r) => r.type === "loom.step.completed").length;
  }
  await app.close();
  return { ...sample, bytes: total, steps };
}

export async function measureSubAgents(options: BenchOptions): Promise<Section> {
  const reps = options.inProcessReps;
  const rows: string[][] = [];
  const perAgent: Record<number, Sample> = {};
  const raw: Record<string, unknown> = {};
  let at4 = 0;
  for (const n of [1, 2, 4, 8]) {
    const sizes = { tree: { bytes: 0, steps: 0 }, single: { bytes: 0, steps: 0 } };
    const samples = await interleave(
      {
        tree: async () => {
          const s = await runOnce(n, "tree");
          sizes.tree = { bytes: s.bytes, steps: s.steps };
          return s;
        },
        single: async () => {
          const s = await runOnce(n, "single");
          sizes.single = { bytes: s.bytes, steps: s.steps };
          return s;
        },
      },
      { reps, warmup: options.warmup },
    );
    const r = ratioOf(samples.tree!, samples.single!);
    if (n === 4) at4 = r.wall;
    const tree = medianSample(samples.tree!);
    const alone = medianSample(samples.single!);
    perAgent[n] = { wall: tree.wall / n, cpu: tree.cpu / n };
    const perStep = tree.wall / sizes.tree.steps / (alone.wall / sizes.single.steps);
    rows.push([
      String(n),
      ratios(r),
      `${bytes(sizes.tree.bytes)} (${sizes.tree.steps} steps)`,
      `${bytes(sizes.single.bytes)} (${sizes.single.steps} steps)`,
      `${tree.wall.toFixed(2)} ms`,
      `${perStep.toFixed(2)}x`,
    ]);
    raw[n] = { samples, sizes };
  }
  const growth = perAgent[8]!.wall / perAgent[1]!.wall;
  return {
    id: "subAgents",
    title: "Sub-agents: the multi-agent story's tree against one agent doing the same tool calls",
    method: [
      `The multi-agent story's tree (stories/support/multiAgent.ts) with n questions: an orchestrator delegating each to a researcher (\`agentTool\`, a child execution: search, read a page, answer) in one turn, then a handoff to a writer; against one agent doing the same tool calls itself (every search in one turn, every page read in the next, then the answer). Memory stores, the scripted model with no latency: what is timed is the runtime. ${reps} repetitions interleaved, medians (wall; CPU); the bytes of every log of the run (\`app.stats(id).logBytes\`, summed: exact) and the recorded steps.`,
    ],
    tables: [
      {
        head: [
          "sub-agents",
          "tree / single agent (median wall; CPU)",
          "journal bytes, tree",
          "journal bytes, single agent",
          "tree, median wall",
          "time per recorded step, tree / single",
        ],
        rows,
      },
    ],
    goals: [
      {
        goal: "the tree at 4 sub-agents at most 1.25x one agent doing the same tool calls (memory, no model latency)",
        met: at4 <= 1.25,
        detail: `${at4.toFixed(2)}x`,
      },
      {
        goal: "linear growth: time per sub-agent at 8 within 1.5x of that at 1",
        met: growth <= 1.5,
        detail: `${growth.toFixed(2)}x`,
      },
    ],
    notes: [
      "The tree records more than the single agent for the same tool calls: each researcher's own model calls (it decides what to search and read, and writes its finding), its start and end, the orchestrator's two turns and the writer's; the single agent's model makes one call per stage for every question at once.",
    ],
    raw: { ...raw, perAgent },
  };
}
