// The agent loop refuses a model turn or a compaction summary that comes back as a claim-check envelope
// (ADR 0140 D9): a guarded transition to the final state `refused`, journaled as the run's TypeError.
import { describe, expect, it } from "vitest";
import { createActor, fromPromise } from "xstate";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { claimCheckMiddleware } from "../../actors/effects/claimCheck.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { createAgentLoopMachine } from "../../machines/agentLoop.js";
import { toolCallIndexOf, toolChildOf } from "../../machines/helpers/agentIds.js";
import { memoryStores } from "../../stores/memory.js";
import { EXECUTION_ENDED, STEP_COMPLETED, TRANSITION } from "../../stores/schema.js";

const MESSAGE = /came back as a claim-check envelope: execution\.claimCheck\.toolIds must list only tools/;

describe("ADR 0140 D9: an envelope where the loop reads content fails the run", () => {
  it("D9: a compaction summary that comes back as an envelope fails the run with a TypeError; nothing after the step is journaled but the end", async () => {
    const stores = memoryStores();
    const app = createApp(
      defineConfig({
        stores,
        effects: {
          model: createLlmEffect(
            scriptedModel((_request, call) =>
              call < 3 ? { toolCalls: [{ toolName: "t", input: {} }] } : { text: "end" },
            ),
          ),
          t: createToolEffect(async () => "y".repeat(400)),
          summarize: createToolEffect(async () => ({ summary: "z".repeat(5_000) })),
        },
        execution: { effectMiddleware: [claimCheckMiddleware({ store: stores.content, capBytes: 100 })] },
      }),
    );
    await app.start(
      agentLoop$({ id: "c", model: "model", tools: ["t"], compaction: { toolId: "summarize", afterBytes: 500 } }),
      { executionId: "c", input: { prompt: "go" } },
    );
    await expect(app.result("c")).rejects.toThrow(/The compaction summary came back as a claim-check envelope/);
    const log = await app.log("c");
    const compact = log.findIndex((r) => r.type === STEP_COMPLETED && r.effectId === "summarize");
    expect(log[compact]).toMatchObject({ stepId: "c#turn:2:compact" });
    expect(log.slice(compact + 1)).toEqual([
      expect.objectContaining({
        type: EXECUTION_ENDED,
        status: "error",
        error: { name: "TypeError", message: expect.stringMatching(MESSAGE) },
      }),
    ]);
    expect(log.filter((r) => r.type === TRANSITION).map((r) => r.to)).not.toContain("refused");
    await app.close();
  });

  it("D9: the pure machine ends in error with the same TypeError when the model turn is an envelope", () => {
    const machine = createAgentLoopMachine({ id: "p", model: "model", tools: [], maxTurns: 3 });
    const actor = createActor(machine.provide({ actors: { model: fromEnvelope() } }), { input: { prompt: "go" } });
    return new Promise<void>((resolve, reject) => {
      actor.subscribe({
        error: (error) => {
          try {
            expect(error).toBeInstanceOf(TypeError);
            expect(error).toMatchObject({
              message: expect.stringMatching(/^The model turn came back as a claim-check envelope/),
            });
            resolve();
          } catch (failure) {
            reject(failure);
          }
        },
        complete: () => reject(new Error("the loop completed")),
      });
      actor.start();
    });
  });
});

describe("agent ids", () => {
  it("finds a tool call's index by building the turn's child ids, never by parsing", () => {
    expect(toolChildOf(2, 1)).toBe("tool:2:1");
    expect(toolCallIndexOf("tool:2:1", 2, 3)).toBe(1);
    expect(toolCallIndexOf("tool:1:1", 2, 3)).toBe(-1);
    expect(toolCallIndexOf("tool:2:3", 2, 3)).toBe(-1);
    expect(toolCallIndexOf("model", 2, 3)).toBe(-1);
    expect(toolCallIndexOf(undefined, 0, 1)).toBe(-1);
  });
});

function fromEnvelope() {
  return fromPromise<unknown, unknown>(async () => ({
    __loomClaimCheck: 1,
    ref: { __loomContent: "sha256:" + "0".repeat(64) },
    size: 5,
  }));
}
