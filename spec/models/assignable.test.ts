// Type test (checked by `npm run typecheck`, run by vitest): a real provider's model of each specification
// version, and the AI SDK's mock models, are accepted by fromAiSdk without a cast, under `strict`.
import { createOpenAI } from "@ai-sdk/openai";
import { MockLanguageModelV2 } from "ai/test";
import { createOpenAICompatible as compatible1 } from "ai-sdk-openai-compatible-v1";
import { createOpenAICompatible as compatible2 } from "ai-sdk-openai-compatible-v2";
import { createOpenAICompatible as compatible3 } from "ai-sdk-openai-compatible-v3";
import { MockLanguageModelV3 } from "ai-v6/test";
import { MockLanguageModelV4 } from "ai-v7/test";
import { tool as tool5 } from "ai";
import { tool as tool6 } from "ai-v6";
import { tool as tool7 } from "ai-v7";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createToolEffect, type Effect } from "../../actors/effects/effect.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";

describe("fromAiSdk's parameter type", () => {
  it("takes every supported provider's model and mock as it is", () => {
    const models = [
      fromAiSdk(compatible1({ name: "a", baseURL: "http://127.0.0.1:9/v1" }).chatModel("m1")),
      fromAiSdk(compatible2({ name: "a", baseURL: "http://127.0.0.1:9/v1" }).chatModel("m2")),
      fromAiSdk(compatible3({ name: "a", baseURL: "http://127.0.0.1:9/v1" }).chatModel("m3")),
      fromAiSdk(createOpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:9/v1" }).chat("gpt")),
      fromAiSdk(createOpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:9/v1" })("gpt")),
      fromAiSdk(new MockLanguageModelV2()),
      fromAiSdk(new MockLanguageModelV3()),
      fromAiSdk(new MockLanguageModelV4()),
    ];
    expect(models.map((m) => m.id)).toEqual([
      "a.chat:m1",
      "a.chat:m2",
      "a.chat:m3",
      "openai.chat:gpt",
      "openai.responses:gpt",
      "mock-provider:mock-model-id",
      "mock-provider:mock-model-id",
      "mock-provider:mock-model-id",
    ]);
  });

  it("refuses, at compile time and at run time, a model of another specification version", () => {
    const v1 = {
      specificationVersion: "v1",
      provider: "old",
      modelId: "m",
      doGenerate: async () => ({ content: [] }),
      doStream: async () => ({ stream: new ReadableStream() }),
    } as const;
    // @ts-expect-error specificationVersion "v1" is not one fromAiSdk speaks
    expect(() => fromAiSdk(v1)).toThrow(/specificationVersion "v2", "v3" or "v4".*got specificationVersion "v1"/);
  });
});

describe("createToolEffect's parameter types", () => {
  it("takes an AI SDK tool() of ai 5, 6 and 7 as it is, and infers a Standard Schema's input type", () => {
    const inputSchema = z.object({ city: z.string() });
    const effects: Effect<{ city: string }>[] = [
      createToolEffect(tool5({ description: "w", inputSchema, execute: async ({ city }) => city })),
      createToolEffect(tool6({ description: "w", inputSchema, execute: async ({ city }) => city })),
      createToolEffect(tool7({ description: "w", inputSchema, execute: async ({ city }) => city })),
      createToolEffect(async ({ city }) => city.toUpperCase(), { inputSchema }),
    ];
    // @ts-expect-error the schema's input has no `town`
    createToolEffect(async ({ town }) => town, { inputSchema });
    expect(effects.map((e) => [e.kind, e.description ?? null, e.inputSchema?.type])).toEqual([
      ["tool", "w", "object"],
      ["tool", "w", "object"],
      ["tool", "w", "object"],
      ["tool", null, "object"],
    ]);
  });
});
