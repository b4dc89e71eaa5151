// quotas.maxTokens counts the usage each reply reports. A provider that reports none (the AI SDK's
// OpenAI-compatible providers when streaming without includeUsage) meters 0 tokens, so the quota can never
// refuse: the app warns once, and the fix it names (includeUsage: true) makes the quota hold.
import { createOpenAICompatible } from "ai-sdk-openai-compatible-v1";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import type { Warning } from "../../actors/bus.js";
import { defineConfig } from "../../actors/config.js";
import { WARNING_CODES } from "../../actors/constants.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { QuotaExceededError } from "../../actors/effects/capabilities.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import { byTurn, startOpenAiServer, type OpenAiServer, type ServerTurn } from "../support/openaiServer.js";

let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

// Three model calls of 15 tokens each (the server's usage: 10 in, 5 out); a quota of 20 refuses the third.
const TURNS: ServerTurn[] = [
  { toolCalls: [{ name: "search", arguments: '{"q":"owls"}' }] },
  { toolCalls: [{ name: "search", arguments: '{"q":"voles"}' }] },
  { text: "Owls eat voles." },
];

function agentApp(baseURL: string, options: { includeUsage: boolean; maxTokens?: number; warnings: Warning[] }) {
  const provider = createOpenAICompatible({
    name: "loopback",
    baseURL,
    ...(options.includeUsage ? { includeUsage: true } : {}),
  });
  return createApp(
    defineConfig({
      stores: memoryStores(),
      effects: {
        model: createLlmEffect(fromAiSdk(provider.chatModel("test-model"))),
        search: createToolEffect(async ({ q }) => [`${q}: hit`], { inputSchema: z.object({ q: z.string() }) }),
      },
      observability: { onWarn: (w) => options.warnings.push(w) },
      ...(options.maxTokens === undefined ? {} : { capabilities: { quotas: { maxTokens: options.maxTokens } } }),
    }),
  );
}

const loop = agentLoop$({ id: "owl", model: "model", tools: ["search"] });
const usageWarnings = (warnings: Warning[]) => warnings.filter((w) => w.code === WARNING_CODES.modelUsageMissing);

describe("quotas.maxTokens and replies that report no usage", () => {
  it("warns once per app when a token quota is set and a streamed reply carries no usage, naming includeUsage", async () => {
    server = await startOpenAiServer(byTurn(TURNS), { usageOnlyWhenAsked: true });
    const warnings: Warning[] = [];
    const app = agentApp(server.baseURL, { includeUsage: false, maxTokens: 20, warnings });
    await app.start(loop, { executionId: "a", input: { prompt: "what do owls eat?" } });
    // Metered at 0 tokens, the quota never refuses: all three calls ran (45 tokens spent against a quota of 20).
    expect(await app.result("a")).toMatchObject({ text: "Owls eat voles.", turns: 3 });
    expect(
      (await app.log("a")).filter((r) => r.type === STEP_COMPLETED && r.effectId === "model").map((r) => r.usage),
    ).toEqual([undefined, undefined, undefined]);
    expect(await app.usage("a")).toMatchObject({ modelCalls: 3, totalTokens: 0 });
    await app.start(loop, { executionId: "b", input: { prompt: "and barn owls?" } });
    await app.result("b");
    const reported = usageWarnings(warnings);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({
      executionId: "a",
      stepId: "owl#turn:0:model",
      effectId: "model",
      maxTokens: 20,
    });
    expect(reported[0]!.message).toContain("capabilities.quotas.maxTokens");
    expect(reported[0]!.message).toContain("includeUsage: true");
    await app.close();
  });

  it("with includeUsage: true the same provider reports usage, nothing is warned, and the quota refuses the third call", async () => {
    server = await startOpenAiServer(byTurn(TURNS), { usageOnlyWhenAsked: true });
    const warnings: Warning[] = [];
    const app = agentApp(server.baseURL, { includeUsage: true, maxTokens: 20, warnings });
    await app.start(loop, { executionId: "a", input: { prompt: "what do owls eat?" } });
    await expect(app.result("a")).rejects.toMatchObject({ error: { name: QuotaExceededError.name } });
    expect(await app.usage("a")).toMatchObject({ modelCalls: 2, totalTokens: 30 });
    expect(server.requests).toHaveLength(2);
    expect(usageWarnings(warnings)).toHaveLength(0);
    await app.close();
  });

  it("without a token quota a reply without usage is not warned about (nothing relies on it)", async () => {
    server = await startOpenAiServer(byTurn(TURNS), { usageOnlyWhenAsked: true });
    const warnings: Warning[] = [];
    const app = agentApp(server.baseURL, { includeUsage: false, warnings });
    await app.start(loop, { executionId: "a", input: { prompt: "what do owls eat?" } });
    await app.result("a");
    expect(usageWarnings(warnings)).toHaveLength(0);
    await app.close();
  });
});
