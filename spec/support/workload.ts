// The seeds' harness (ADR 0140 "Measured"): a scripted agent with 1.5-4 kB of tool output per turn,
// seeded, so tests, stories and benchmarks measure the same bytes.
import { createLlmEffect } from "../../actors/agents/model.js";
import { createToolEffect, type Effect } from "../../actors/effects/effect.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import type { ModelReply } from "../../machines/helpers/messages.js";

/** A small, fast, seeded PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = "owl barn night hunt vole field nest wing silent flight feather prey talon roost dusk meadow".split(" ");

/** A tool result of 1.5-4 kB for `turn`, the same for the same seed and turn. */
export function toolOutput(seed: number, turn: number): { rows: { id: number; text: string }[] } {
  const random = prng(seed * 1_000_003 + turn);
  const target = 1_500 + Math.floor(random() * 2_500);
  const rows: { id: number; text: string }[] = [];
  let size = 12;
  while (size < target) {
    const words = Array.from(
      { length: 8 + Math.floor(random() * 8) },
      () => WORDS[Math.floor(random() * WORDS.length)],
    ).join(" ");
    rows.push({ id: rows.length, text: words });
    size += words.length + 20;
  }
  return { rows };
}

/** The model's script: a tool call per turn until the last turn, which answers. */
export function workloadReply(turns: number) {
  return (_request: unknown, call: number): ModelReply =>
    call < turns - 1
      ? {
          toolCalls: [{ toolName: "search", input: { q: `topic ${call}` } }],
          usage: { inputTokens: 100 + call, outputTokens: 20 },
        }
      : { text: `Done after ${turns} turns.`, usage: { inputTokens: 100, outputTokens: 10 } };
}

export interface WorkloadCounters {
  modelCalls: number;
  toolCalls: number;
}

/** Effects for the workload, counting live calls. */
export function workloadEffects(
  turns: number,
  seed = 42,
): { effects: Record<string, Effect>; counters: WorkloadCounters } {
  const counters: WorkloadCounters = { modelCalls: 0, toolCalls: 0 };
  const model = scriptedModel(workloadReply(turns));
  const llm = createLlmEffect(model);
  return {
    counters,
    effects: {
      model: { ...llm, run: (input, ctx) => (counters.modelCalls++, llm.run(input, ctx)) },
      search: createToolEffect(async (_input: unknown, ctx) => {
        counters.toolCalls++;
        const turn = Number(/turn:(\d+):tool/.exec(ctx.stepId)?.[1] ?? 0);
        return toolOutput(seed, turn);
      }),
    },
  };
}
