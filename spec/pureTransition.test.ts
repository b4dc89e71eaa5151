// The planner's pure transitions (actors/pureTransition.ts): one inert actor per logic, a fresh actor
// system per call, and only the effect children that still run kept in the snapshot.
import { assign, setup } from "xstate";
import { describe, expect, it } from "vitest";
import { agentLoop$ } from "../actors/agents/agentLoop.js";
import { createLlmEffect } from "../actors/agents/model.js";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { createToolEffect } from "../actors/effects/effect.js";
import { scriptedModel } from "../adapters/scripted/index.js";
import { effectActor } from "../machines/helpers/effectActor.js";
import { memoryStores } from "../stores/memory.js";
import { STEP_COMPLETED } from "../stores/schema.js";

describe("pure transitions", () => {
  it("re-invokes a child with the same systemId in every round: no call sees an earlier call's registration", async () => {
    // Pure transitions execute no stop action, so a system shared between calls would still hold the
    // previous round's "worker" and refuse the next spawn with a systemId collision.
    const machine = setup({
      actors: { work: effectActor<number, number>() },
      types: {} as { context: { round: number } },
    }).createMachine({
      id: "rounds",
      context: { round: 0 },
      initial: "working",
      states: {
        working: {
          invoke: {
            src: "work",
            id: "worker",
            systemId: "worker",
            input: ({ context }) => context.round,
            onDone: [
              { guard: ({ context }) => context.round >= 4, target: "done" },
              { target: "working", reenter: true, actions: assign({ round: ({ context }) => context.round + 1 }) },
            ],
          },
        },
        done: { type: "final" },
      },
      output: ({ context }) => context.round,
    });
    const app = createApp(
      defineConfig({ stores: memoryStores(), effects: { work: createToolEffect(async (n: number) => n) } }),
    );
    await app.start(machine, { executionId: "r", input: {} });
    expect(await app.result("r")).toBe(4);
    expect((await app.log("r")).filter((r) => r.type === STEP_COMPLETED)).toHaveLength(5);
    await app.close();
  });

  it("keeps in the snapshot only the effect children still running, not every child the run spawned", async () => {
    const turns = 12;
    const model = scriptedModel((_request, call) =>
      call < turns - 1 ? { toolCalls: [{ toolName: "search", input: { q: String(call) } }] } : { text: "done" },
    );
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          model: createLlmEffect(model),
          search: createToolEffect(async ({ q }: { q: string }) => `hit ${q}`),
        },
      }),
    );
    const loop = agentLoop$({
      id: "kids",
      model: "model",
      tools: ["search"],
      maxTurns: turns,
      warnTranscriptBytes: false,
    });
    const actor = await app.start(loop, { executionId: "r", input: { prompt: "go" } });
    const seen: string[][] = [];
    actor.subscribe((snapshot) => seen.push(Object.keys(snapshot.children)));
    await app.result("r");
    expect(seen.length).toBeGreaterThan(turns);
    // At most the one running step of a turn (its model call, or its one tool call).
    expect(Math.max(...seen.map((ids) => ids.length))).toBe(1);
    await app.close();
  });
});
