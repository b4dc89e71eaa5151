// The golden agent journal (campaign 10): a small agentLoop$ run of schema version 1, generated once into
// spec/fixtures/agent-v1.journal.json by `npx tsx reliability/golden-agent.ts` and replayed on every run.
// It covers what an agent log holds: a system prompt, two tools in one turn (one of them failing, so a
// STEP_FAILED), a second turn, model usage, a subject, and the answer. Never regenerate it to make a
// failing replay pass: a change that breaks it needs a schema version bump (docs/adr/0001-journal.md).
import { writeFile } from "node:fs/promises";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp } from "../../actors/app.js";
import { simulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect, type Effect } from "../../actors/effects/effect.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { EVENT_SCHEMA } from "../../stores/schema.js";
import { memoryStores } from "../../stores/memory.js";
import type { StoredRecord } from "../../stores/types.js";

export const GOLDEN_AGENT_EXECUTION_ID = "golden-agent";

export const goldenAgent = agentLoop$({
  id: "golden-agent",
  model: "model",
  tools: ["search", { name: "lookup", description: "a record by id" }],
  system: "Be brief.",
  maxTurns: 4,
  warnTranscriptBytes: false,
});

/** The effects the journal was recorded with; a replay must run none of them (`runs` counts). */
export function goldenAgentEffects(runs: Map<string, number> = new Map()): Record<string, Effect> {
  const count = (stepId: string) => runs.set(stepId, (runs.get(stepId) ?? 0) + 1);
  const model = createLlmEffect(
    scriptedModel([
      {
        toolCalls: [
          { toolName: "search", input: { q: "barn owl range" } },
          { toolName: "lookup", input: { id: 404 } },
        ],
        usage: { inputTokens: 42, outputTokens: 12 },
      },
      {
        toolCalls: [{ toolName: "search", input: { q: "barn owl diet" } }],
        usage: { inputTokens: 120, outputTokens: 9 },
      },
      {
        text: "Barn owls live on every continent but Antarctica and eat voles.",
        usage: { inputTokens: 180, outputTokens: 15 },
      },
    ]),
  );
  return {
    model: { ...model, run: (input, ctx) => (count(ctx.stepId), model.run(input, ctx)) },
    search: createToolEffect(async ({ q }: { q: string }, ctx) => {
      count(ctx.stepId);
      return { query: q, hits: [`${q}: result 1`, `${q}: result 2 ✓`] };
    }),
    lookup: createToolEffect(async ({ id }: { id: number }, ctx) => {
      count(ctx.stepId);
      throw Object.assign(new Error(`record ${id} not found`), { code: "NOT_FOUND" });
    }),
  };
}

export interface GoldenJournal {
  schema: number;
  executionId: string;
  records: StoredRecord[];
}

/** Runs the golden agent once, on a fixed clock, and writes its journal to `path`. */
export async function writeGoldenAgentJournal(path: string): Promise<GoldenJournal> {
  const stores = memoryStores();
  const app = createApp(
    defineConfig({ stores, effects: goldenAgentEffects(), clock: simulatedClock(1_795_910_400_000) }),
  );
  await app.start(goldenAgent, {
    executionId: GOLDEN_AGENT_EXECUTION_ID,
    subject: "user-7",
    input: { prompt: "Where do barn owls live, and what do they eat?" },
  });
  await app.result(GOLDEN_AGENT_EXECUTION_ID);
  const golden: GoldenJournal = {
    schema: EVENT_SCHEMA.version,
    executionId: GOLDEN_AGENT_EXECUTION_ID,
    records: await app.log(GOLDEN_AGENT_EXECUTION_ID),
  };
  await writeFile(path, `${JSON.stringify(golden, null, 1)}\n`);
  await app.close();
  return golden;
}
