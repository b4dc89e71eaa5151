// Providers: the scripted offline model and the AI SDK adapter, against the AI SDK's own mock model.
import { MockLanguageModelV2 } from "ai/test";
import { describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import type { EffectContext } from "../../actors/effects/effect.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { memoryStores } from "../../stores/memory.js";

const ctx = (stepId: string) => ({ stepId, signal: new AbortController().signal }) as EffectContext;

describe("scriptedModel", () => {
  it("answers one reply per call, in order, with tool calls and usage", async () => {
    const model = scriptedModel([
      { toolCalls: [{ toolName: "s", input: { q: 1 } }], usage: { inputTokens: 3, outputTokens: 1 } },
      { text: "end" },
    ]);
    expect(await model.generate({ messages: [], tools: [] }, ctx("x#a:1"))).toEqual({
      toolCalls: [{ toolName: "s", input: { q: 1 } }],
      usage: { inputTokens: 3, outputTokens: 1 },
    });
    expect(await model.generate({ messages: [], tools: [] }, ctx("x#a:2"))).toEqual({ text: "end" });
    await expect(model.generate({ messages: [], tools: [] }, ctx("x#a:3"))).rejects.toThrow(
      /no reply scripted for call 2/,
    );
  });

  it("numbers calls by the loop's turn, so a fresh process gets the next turn's reply", async () => {
    const model = scriptedModel([{ text: "zero" }, { text: "one" }, { text: "two" }]);
    expect(await model.generate({ messages: [], tools: [] }, ctx("loop#turn:2:model"))).toEqual({ text: "two" });
  });
});

describe("fromAiSdk", () => {
  it("drives an AI SDK LanguageModel: prompt, tools, tool calls, usage and the abort signal", async () => {
    const mock = new MockLanguageModelV2({
      doGenerate: [
        {
          content: [{ type: "tool-call", toolCallId: "c1", toolName: "search", input: '{"q":"owls"}' }],
          finishReason: "tool-calls",
          usage: { inputTokens: 12, outputTokens: 4, totalTokens: 16 },
          warnings: [],
        },
        {
          content: [{ type: "text", text: "Owls are nocturnal." }],
          finishReason: "stop",
          usage: { inputTokens: 30, outputTokens: 6, totalTokens: 36 },
          warnings: [],
        },
      ],
    });
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          model: createLlmEffect(fromAiSdk(mock, { stream: false })),
          search: createToolEffect(async ({ q }: { q: string }) => ({ hits: [q] })),
        },
      }),
    );
    await app.start(agentLoop$({ id: "ai", model: "model", tools: ["search"], system: "Be brief.", maxTokens: 200 }), {
      executionId: "ai",
      input: { prompt: "owls?" },
    });
    expect(await app.result("ai")).toMatchObject({ text: "Owls are nocturnal.", turns: 2 });
    expect(mock.doGenerateCalls).toHaveLength(2);
    const second = mock.doGenerateCalls[1]!;
    expect(second.maxOutputTokens).toBe(200);
    expect(second.tools).toEqual([{ type: "function", name: "search", inputSchema: { type: "object" } }]);
    expect(second.abortSignal).toBeInstanceOf(AbortSignal);
    expect(second.prompt).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "owls?" }] },
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "c1", toolName: "search", input: { q: "owls" } }],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "search",
            output: { type: "json", value: { hits: ["owls"] } },
          },
        ],
      },
    ]);
    const steps = (await app.log("ai")).filter((r) => r.type === "loom.step.completed" && r.effectId === "model");
    expect(steps[0]).toMatchObject({
      output: {
        toolCalls: [{ id: "c1", toolName: "search", input: { q: "owls" } }],
        usage: { inputTokens: 12, outputTokens: 4 },
        finishReason: "tool-calls",
      },
    });
  });

  it("refuses what is not a v2, v3 or v4 LanguageModel, and a tool call whose input is not JSON", async () => {
    expect(() => fromAiSdk({} as never)).toThrow(/specificationVersion "v2", "v3" or "v4"/);
    const mock = new MockLanguageModelV2({
      doGenerate: {
        content: [{ type: "tool-call", toolCallId: "c", toolName: "t", input: "{not json" }],
        finishReason: "tool-calls",
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        warnings: [],
      },
    });
    await expect(fromAiSdk(mock, { stream: false }).generate({ messages: [], tools: [] }, ctx("x"))).rejects.toThrow(
      /input that is not JSON/,
    );
  });
});
