// The app of campaign 6 (erasure under crashes), shared by its child process and the checks: agents of
// two subjects on sealed records (security.crypto) with their tool outputs claim-checked into an
// EncryptingContentStore, and erasure enabled.
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp, type App } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect, type Effect } from "../../actors/effects/effect.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { EncryptingContentStore } from "../../stores/encryptingContentStore.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import type { StoredRecord, Stores } from "../../stores/types.js";

export const SUBJECT_A = "subject-A";
export const SUBJECT_B = "subject-B";
/** A marker of each subject's data: once A is erased, A's must be readable nowhere. */
export const canaryOf = (subject: string) => `CANARY-${subject}-5e1f`;

const TOOLS = ["fetch", "shared"];
export const lifecycleLoop = agentLoop$({
  id: "life",
  model: "model",
  tools: TOOLS,
  maxTurns: 3,
  warnTranscriptBytes: false,
});

/** The executions the setup runs: two of A, one of B (the one that must stay intact). */
export const LIFECYCLE_EXECUTIONS = [
  { executionId: "a1", subject: SUBJECT_A },
  { executionId: "a2", subject: SUBJECT_A },
  { executionId: "b1", subject: SUBJECT_B },
];

const rows = (tag: string) => Array.from({ length: 40 }, (_, i) => ({ id: i, text: `${tag} row ${i}` }));

function effects(): Record<string, Effect> {
  return {
    model: createLlmEffect({
      id: "life",
      async generate(request, ctx) {
        const turn = Number(/#turn:(\d+):model$/.exec(ctx.stepId)?.[1] ?? 0);
        return turn === 0
          ? { toolCalls: request.tools.map((tool) => ({ toolName: tool.name, input: {} })) }
          : { text: `done for ${ctx.subject}` };
      },
    }),
    fetch: createToolEffect(async (_input: unknown, ctx) => ({
      owner: ctx.subject,
      canary: canaryOf(String(ctx.subject)),
      rows: rows(`fetch ${ctx.executionId}`),
    })),
    shared: createToolEffect(async () => ({ dataset: "public", rows: rows("shared") })),
  };
}

export function lifecycleApp(stores: Stores): App {
  return createApp(
    defineConfig({
      stores,
      effects: effects(),
      logics: [lifecycleLoop],
      execution: {
        snapshotEvery: 4,
        claimCheck: { store: new EncryptingContentStore(stores.content, stores.keys), toolIds: TOOLS },
      },
      security: { crypto: { keys: stores.keys } },
      compliance: { erase: true },
    }),
  );
}

/** The content addresses an execution's tool steps offloaded (read while the key exists). */
export function offloadedAddresses(log: StoredRecord[]): string[] {
  const out: string[] = [];
  for (const record of log) {
    if (record.type !== STEP_COMPLETED || record.effectId === "model") continue;
    const address = (record.output as { ref?: { __loomContent?: string } } | undefined)?.ref?.__loomContent;
    if (address) out.push(address);
  }
  return out;
}
