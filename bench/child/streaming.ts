// Time to the first text delta, in a fresh process (bench/streaming.ts): through loomwork (app.start ->
// the model step -> fromAiSdk -> doStream -> the bus) beside the bare provider stream (doStream read
// directly), on the same loopback OpenAI-compatible server, interleaved; then, untimed, where the time of
// each goes (phases), and the bytes one streamed turn adds to the journal. A fresh process, so what ran
// before it in `npm run bench` (its heap, timers, compiled code) weighs on neither variant.
// The server runs in a process of its own (bench/child/openaiServer.ts), as a provider does: the goal's
// pair. The same pair against a server on this process's own thread is timed beside it, interleaved.
import { createLlmEffect } from "../../actors/agents/model.js";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { fromAiSdk, type AiSdkLanguageModel } from "../../adapters/ai-sdk/index.js";
import { utf8Length } from "../../stores/bytes.js";
import { memoryStores } from "../../stores/memory.js";
import { byTurn, startOpenAiServer } from "../../spec/support/openaiServer.js";
import { PROVIDERS } from "../../spec/support/providers.js";
import { interleave, median, span, type Sample } from "../measure.js";
import { report, serveChild } from "../spawn.js";

export interface StreamingArgs {
  /** Interleaved rounds timed (each runs both variants once), after `warmup` unrecorded ones. */
  reps: number;
  warmup: number;
  /** Untimed rounds with the phase marks. */
  phaseReps: number;
}

/** Median milliseconds from the start of a variant to each mark. */
export type Phases = Record<string, number>;

export interface StreamingReport {
  samples: Record<string, Sample[]>;
  phases: { bare: Phases; loomwork: Phases };
  journal: { turnBytes: number; replyBytes: number; deltas: number };
  textChars: number;
  provider: { name: string; spec: string };
  ms: number;
}

export const STREAMED_TEXT =
  "Barn owls hunt by ear: in total darkness they strike within a degree of a rustling mouse. ".repeat(8);
const PROMPT = "How do barn owls hunt?";

const args = JSON.parse(process.argv[2] ?? "{}") as StreamingArgs;
const TURN = { text: STREAMED_TEXT, chunkChars: 16 };

// The server in a process of its own (bench/child/openaiServer.ts prints its baseURL first).
const server = await serveChild("openaiServer", TURN);
const own = { baseURL: server.line, close: server.close };
const local = await startOpenAiServer(byTurn([TURN]));
const provider = PROVIDERS[2]!; // @ai-sdk/openai-compatible 3.x, LanguageModel v4
// Defined once, as an app defines its agent: what is timed is a turn, not building the machine.
const agent = agentLoop$({ id: "bench", model: "model" });
const journal = { turnBytes: 0, replyBytes: 0, deltas: 0 };
let n = 0;

/** The same model, its doStream marking when it is called and when it resolves (the response's headers). */
function marked(model: AiSdkLanguageModel, mark: (name: string) => void): AiSdkLanguageModel {
  const doStream = model.doStream!.bind(model);
  return Object.assign(Object.create(model) as AiSdkLanguageModel, {
    doStream: async (options: Parameters<typeof doStream>[0]) => {
      mark("doStream called");
      const result = await doStream(options);
      mark("doStream resolved");
      return result;
    },
  });
}

async function bare(baseURL: string, mark?: (name: string) => void): Promise<Sample> {
  const model = provider.model(baseURL);
  const end = span();
  mark?.("start");
  mark?.("doStream called");
  const { stream } = await model.doStream!({ prompt: [{ role: "user", content: [{ type: "text", text: PROMPT }] }] });
  mark?.("doStream resolved");
  const reader = stream.getReader();
  let first: Sample | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!first && value.type === "text-delta") {
      first = end();
      mark?.("first text-delta");
    }
  }
  return first!;
}

async function loomwork(baseURL: string, mark?: (name: string) => void): Promise<Sample> {
  const stores = memoryStores();
  const model = provider.model(baseURL);
  const app = createApp(
    defineConfig({ stores, effects: { model: createLlmEffect(fromAiSdk(mark ? marked(model, mark) : model)) } }),
  );
  const id = `s-${n++}`;
  let first: Sample | undefined;
  let deltas = 0;
  const end = span();
  mark?.("start");
  // Phase runs only: the timed ones listen to nothing the bare variant has no counterpart of.
  if (mark) {
    let journaled = false;
    app.on("append", () => {
      if (!journaled) mark("start journaled");
      journaled = true;
    });
  }
  app.on("delta", ({ delta }) => {
    if (delta.type !== "text-delta") return;
    deltas++;
    if (first) return;
    first = end();
    mark?.("first text-delta");
  });
  await app.start(agent, { executionId: id, input: { prompt: PROMPT } });
  mark?.("app.start resolved");
  await app.result(id);
  const log = await stores.events.read(id);
  const step = log.find((r) => r.type === "loom.step.completed");
  journal.turnBytes = utf8Length(JSON.stringify(step));
  journal.replyBytes = utf8Length(JSON.stringify(step?.output));
  journal.deltas = deltas;
  await app.close();
  return first!;
}

/** Median time from the variant's start (where its timed span starts) to each of its marks, over `reps` untimed runs. */
async function phasesOf(variant: (mark: (name: string) => void) => Promise<Sample>, reps: number): Promise<Phases> {
  const marks: Record<string, number[]> = {};
  for (let i = 0; i < reps; i++) {
    const at: Record<string, number> = {};
    await variant((name) => (at[name] = performance.now()));
    for (const [name, t] of Object.entries(at)) if (name !== "start") (marks[name] ??= []).push(t - at.start!);
  }
  return Object.fromEntries(Object.entries(marks).map(([name, ms]) => [name, median(ms)]));
}

const t0 = performance.now();
try {
  const samples = await interleave(
    {
      bare: () => bare(own.baseURL),
      loomwork: () => loomwork(own.baseURL),
      "bare, server on this thread": () => bare(local.baseURL),
      "loomwork, server on this thread": () => loomwork(local.baseURL),
    },
    { reps: args.reps, warmup: args.warmup },
  );
  const phases = {
    bare: await phasesOf((mark) => bare(own.baseURL, mark), args.phaseReps),
    loomwork: await phasesOf((mark) => loomwork(own.baseURL, mark), args.phaseReps),
  };
  const facts: StreamingReport = {
    samples,
    phases,
    journal,
    textChars: STREAMED_TEXT.length,
    provider: { name: provider.name, spec: provider.spec },
    ms: performance.now() - t0,
  };
  own.close();
  await local.close();
  report({ ...facts });
} catch (error) {
  own.close();
  await local.close();
  throw error;
}
