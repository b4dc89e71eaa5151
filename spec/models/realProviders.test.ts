// The real AI SDK providers of each specification version (v2, v3, v4) against the OpenAI-compatible server
// on 127.0.0.1: schema'd tools, streaming, tool errors the model corrects, call options, reply fields.
import { jsonSchema, tool } from "ai-v7";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { memoryStores } from "../../stores/memory.js";
import { byTurn, startOpenAiServer, type OpenAiServer, type ServerTurn } from "../support/openaiServer.js";
import { PROVIDERS } from "../support/providers.js";

let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SEARCH_SCHEMA = z.object({ q: z.string().min(1) });
const LOOKUP_SCHEMA = {
  type: "object",
  properties: { id: { type: "integer" } },
  required: ["id"],
  additionalProperties: false,
};

function tools(ran: unknown[]) {
  return {
    search: createToolEffect(async ({ q }) => (ran.push(["search", q]), { hits: [`${q}-1`, `${q}-2`] }), {
      description: "Search the web",
      inputSchema: SEARCH_SCHEMA,
    }),
    lookup: createToolEffect(
      async ({ id }: { id: number }) => (ran.push(["lookup", id]), { id, title: `paper ${id}` }),
      { description: "A paper by id", inputSchema: LOOKUP_SCHEMA },
    ),
  };
}

const TWO_TOOLS: ServerTurn[] = [
  {
    toolCalls: [
      { id: "call_A", name: "search", arguments: '{"q":"owls"}' },
      { id: "call_B", name: "lookup", arguments: '{"id":7}' },
    ],
    usage: { prompt: 40, completion: 12 },
  },
  { reasoning: "Both tools answered.", text: "Barn owls hunt by sound.", usage: { prompt: 90, completion: 8 } },
];

for (const provider of PROVIDERS) {
  describe(`${provider.name} (LanguageModel ${provider.spec})`, () => {
    it("is a model of its specification version", () => {
      expect(provider.model("http://127.0.0.1:9/v1").specificationVersion).toBe(provider.spec);
    });

    for (const stream of [true, false]) {
      it(`runs an agent with two schema'd tools to its end (${stream ? "streamed" : "doGenerate"}); schemas reach the server as JSON Schema`, async () => {
        server = await startOpenAiServer(byTurn(TWO_TOOLS));
        const ran: unknown[] = [];
        const deltas: string[] = [];
        const app = createApp(
          defineConfig({
            stores: memoryStores(),
            effects: { model: createLlmEffect(fromAiSdk(provider.model(server.baseURL), { stream })), ...tools(ran) },
          }),
        );
        app.on("delta", ({ delta }) => delta.type === "text-delta" && deltas.push(delta.delta ?? ""));
        await app.start(agentLoop$({ id: "owl", model: "model", tools: ["search", "lookup"], system: "Be brief." }), {
          executionId: "owl",
          input: { prompt: "How do barn owls hunt?" },
        });
        expect(await app.result("owl")).toMatchObject({ text: "Barn owls hunt by sound.", turns: 2 });
        // The turn's two tools run concurrently: each once, in either order.
        expect(ran).toHaveLength(2);
        expect(ran).toEqual(
          expect.arrayContaining([
            ["search", "owls"],
            ["lookup", 7],
          ]),
        );
        expect(server.requests).toHaveLength(2);
        const sent = server.requests[0]!.body;
        expect(sent.stream ?? false).toBe(stream);
        expect(sent.tools).toEqual([
          {
            type: "function",
            function: {
              name: "search",
              description: "Search the web",
              parameters: expect.objectContaining({
                type: "object",
                properties: { q: { type: "string", minLength: 1 } },
                required: ["q"],
              }),
            },
          },
          {
            type: "function",
            function: {
              name: "lookup",
              description: "A paper by id",
              parameters: expect.objectContaining(LOOKUP_SCHEMA),
            },
          },
        ]);
        // The provider's tool-call ids go back to the model with the results.
        const second = server.requests[1]!.body.messages;
        expect(second.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(["call_A", "call_B"]);
        const replies = (await app.log("owl"))
          .filter((r) => r.type === "loom.step.completed" && r.effectId === "model")
          .map((r) => r.output);
        expect(replies[0]).toMatchObject({
          toolCalls: [
            { id: "call_A", toolName: "search", input: { q: "owls" } },
            { id: "call_B", toolName: "lookup", input: { id: 7 } },
          ],
          finishReason: "tool-calls",
          usage: { inputTokens: 40, outputTokens: 12 },
        });
        expect(replies[1]).toMatchObject({
          text: "Barn owls hunt by sound.",
          finishReason: "stop",
          usage: { inputTokens: 90, outputTokens: 8 },
        });
        if (stream) {
          expect(deltas.length).toBeGreaterThan(1);
          expect(deltas.join("")).toBe("Barn owls hunt by sound.");
        } else expect(deltas).toEqual([]);
        expect(JSON.stringify(await app.log("owl"))).not.toMatch(/text-delta|tool-input-delta/);
        await app.close();
      });
    }

    // The OpenAI chat API returns no reasoning text; OpenAI-compatible servers do (reasoning_content).
    if (provider.name.includes("compatible"))
      it("keeps the model's reasoning in the journaled reply", async () => {
        server = await startOpenAiServer(byTurn([{ reasoning: "Think first.", text: "Done." }]));
        const app = createApp(
          defineConfig({
            stores: memoryStores(),
            effects: { model: createLlmEffect(fromAiSdk(provider.model(server.baseURL))) },
          }),
        );
        await app.start(agentLoop$({ id: "r", model: "model" }), { executionId: "r", input: { prompt: "x" } });
        await app.result("r");
        const reply = (await app.log("r")).find((r) => r.type === "loom.step.completed")!.output;
        expect(reply).toMatchObject({ text: "Done.", reasoning: "Think first." });
        await app.close();
      });

    it("answers an invalid input and an unknown tool with tool-error results, and the corrected call runs", async () => {
      server = await startOpenAiServer(
        byTurn([
          {
            toolCalls: [
              { id: "bad", name: "search", arguments: '{"q":5}' },
              { id: "ghost", name: "teleport", arguments: "{}" },
            ],
          },
          { toolCalls: [{ id: "good", name: "search", arguments: '{"q":"owls"}' }] },
          { text: "Found them." },
        ]),
      );
      const ran: unknown[] = [];
      const app = createApp(
        defineConfig({
          stores: memoryStores(),
          effects: { model: createLlmEffect(fromAiSdk(provider.model(server.baseURL))), ...tools(ran) },
        }),
      );
      await app.start(agentLoop$({ id: "fix", model: "model", tools: ["search", "lookup"] }), {
        executionId: "fix",
        input: { prompt: "owls" },
      });
      expect(await app.result("fix")).toMatchObject({ text: "Found them.", turns: 3 });
      expect(ran).toEqual([["search", "owls"]]);
      const seen = server.requests[1]!.body.messages.filter((m) => m.role === "tool");
      expect(seen.map((m) => m.tool_call_id)).toEqual(["bad", "ghost"]);
      expect(String(seen[0]!.content)).toMatch(/Invalid input for tool \\?"search\\?": q: .*string/);
      expect(String(seen[1]!.content)).toMatch(/unknown tool \\?"teleport\\?"/);
      // The refused input is journaled like any tool outcome.
      const failed = (await app.log("fix")).filter((r) => r.type === "loom.step.failed");
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ stepId: "fix#turn:0:tool:0", error: { code: "LOOM_TOOL_INPUT" } });
      await app.close();
    });

    it("passes the call options through (temperature, topP, seed, stop sequences, toolChoice, headers)", async () => {
      server = await startOpenAiServer(byTurn([{ text: "ok" }]));
      const model = fromAiSdk(provider.model(server.baseURL), { callOptions: { temperature: 0.9, seed: 1 } });
      const app = createApp(
        defineConfig({ stores: memoryStores(), effects: { model: createLlmEffect(model), ...tools([]) } }),
      );
      const loop = agentLoop$({
        id: "opts",
        model: "model",
        tools: ["search"],
        maxTokens: 64,
        callOptions: {
          temperature: 0.2,
          topP: 0.5,
          seed: 42,
          stopSequences: ["END"],
          toolChoice: "required",
          headers: { "x-loom-test": "yes" },
        },
      });
      await app.start(loop, { executionId: "opts", input: { prompt: "x" } });
      await app.result("opts");
      const { body, headers } = server.requests[0]!;
      expect(body).toMatchObject({ temperature: 0.2, top_p: 0.5, seed: 42, stop: ["END"], tool_choice: "required" });
      expect(body.max_tokens ?? body.max_completion_tokens).toBe(64);
      expect(headers["x-loom-test"]).toBe("yes");
      await app.close();
    });
  });
}

describe("AI SDK tool() as a tool", () => {
  it("takes tool({ description, inputSchema, execute }) as it is: its schema reaches the model, its input is validated", async () => {
    server = await startOpenAiServer(
      byTurn([
        { toolCalls: [{ name: "weather", arguments: '{"city":""}' }] },
        { toolCalls: [{ name: "weather", arguments: '{"city":"Oslo"}' }] },
        { text: "Cold." },
      ]),
    );
    const calls: string[] = [];
    const weather = tool({
      description: "Weather in a city",
      inputSchema: z.object({ city: z.string().min(1) }),
      execute: async ({ city }) => (calls.push(city), { city, celsius: -3 }),
    });
    const units = tool({
      description: "Units",
      inputSchema: jsonSchema<{ system: string }>({
        type: "object",
        properties: { system: { type: "string", enum: ["si", "us"] } },
        required: ["system"],
      }),
      execute: async () => "si",
    });
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          model: createLlmEffect(fromAiSdk(PROVIDERS[3]!.model(server.baseURL))),
          weather: createToolEffect(weather),
          units: createToolEffect(units),
        },
      }),
    );
    await app.start(agentLoop$({ id: "w", model: "model", tools: ["weather", "units"] }), {
      executionId: "w",
      input: { prompt: "Oslo?" },
    });
    expect(await app.result("w")).toMatchObject({ text: "Cold.", turns: 3 });
    expect(calls).toEqual(["Oslo"]);
    const [weatherTool, unitsTool] = server.requests[0]!.body.tools!;
    expect(weatherTool).toMatchObject({
      function: {
        name: "weather",
        description: "Weather in a city",
        parameters: { type: "object", properties: { city: { type: "string", minLength: 1 } } },
      },
    });
    expect(unitsTool).toMatchObject({
      function: { name: "units", parameters: { properties: { system: { enum: ["si", "us"] } } } },
    });
    await app.close();
  });
});
