// scriptedModel: a script given as a function may compute its reply asynchronously (a fixture read from disk,
// a reply that waits on the test); what it resolves to is checked as a reply is, and a rejection fails the step.
import { describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { ModelReplyError } from "../../actors/errors.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import type { ModelReply } from "../../machines/helpers/messages.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";

function app(model: ReturnType<typeof scriptedModel>) {
  return createApp(
    defineConfig({
      stores: memoryStores(),
      effects: {
        model: createLlmEffect(model, { retry: false }),
        search: createToolEffect(async ({ q }: { q: string }) => [`${q}: hit`]),
      },
    }),
  );
}

describe("scriptedModel with an async script", () => {
  it("awaits the reply an async function resolves to, turn by turn, and journals it", async () => {
    const model = scriptedModel(async (_request, call): Promise<ModelReply> => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return call === 0
        ? { toolCalls: [{ toolName: "search", input: { q: "owls" } }] }
        : { text: "Owls hunt at night." };
    });
    const a = app(model);
    await a.start(agentLoop$({ id: "s", model: "model", tools: ["search"] }), {
      executionId: "s",
      input: { prompt: "owls?" },
    });
    expect(await a.result("s")).toMatchObject({ text: "Owls hunt at night.", turns: 2 });
    const replies = (await a.log("s"))
      .filter((r) => r.type === STEP_COMPLETED && r.effectId === "model")
      .map((r) => r.output);
    expect(replies).toEqual([
      { toolCalls: [{ toolName: "search", input: { q: "owls" } }] },
      { text: "Owls hunt at night." },
    ]);
    expect(model.calls).toBe(2);
  });

  it("checks what the promise resolves to as a reply (ModelReplyError naming the step), and a rejection fails the step with its own error", async () => {
    const bad = app(scriptedModel(async () => ({ text: 42 }) as unknown as ModelReply));
    await bad.start(agentLoop$({ id: "b", model: "model" }), { executionId: "b", input: { prompt: "x" } });
    const failure = await bad.result("b").then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeDefined();
    const failed = (await bad.log("b")).find((r) => r.type === STEP_FAILED);
    expect(failed).toMatchObject({
      stepId: "b#turn:0:model",
      error: { name: ModelReplyError.name, message: expect.stringContaining("the reply's text is the number 42") },
    });
    expect(failed!.error.message).not.toContain("could not be cloned");

    const missing = app(scriptedModel(async () => undefined as unknown as ModelReply));
    await missing.start(agentLoop$({ id: "m", model: "model" }), { executionId: "m", input: { prompt: "x" } });
    await missing.result("m").catch(() => undefined);
    expect((await missing.log("m")).find((r) => r.type === STEP_FAILED)).toMatchObject({
      error: { name: ModelReplyError.name, message: expect.stringContaining("returned undefined") },
    });

    const rejecting = app(scriptedModel(async () => Promise.reject(new Error("fixture missing"))));
    await rejecting.start(agentLoop$({ id: "r", model: "model" }), { executionId: "r", input: { prompt: "x" } });
    await rejecting.result("r").catch(() => undefined);
    expect((await rejecting.log("r")).find((r) => r.type === STEP_FAILED)).toMatchObject({
      error: { message: "fixture missing" },
    });
  });
});
