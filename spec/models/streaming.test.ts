// Streaming through the real providers: deltas in order whose concatenation is the journaled reply, none
// in the log; a reconnect from index k; a stream opened after a reload shows the recorded turns and the
// in-flight one from its start; app.stop aborts the model's stream; the AI SDK UI message stream protocol.
import { readUIMessageStream, type UIMessage } from "ai-v7";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import type { StreamPart } from "../../actors/agents/streams.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { memoryStores } from "../../stores/memory.js";
import type { Stores } from "../../stores/types.js";
import { byTurn, startOpenAiServer, type OpenAiServer, type ServerTurn } from "../support/openaiServer.js";
import { PROVIDERS } from "../support/providers.js";

let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ANSWER = "Barn owls hunt at night by sound, with asymmetric ears.";
const TURNS: ServerTurn[] = [
  { toolCalls: [{ id: "call_S", name: "search", arguments: '{"q":"barn owl hunting"}' }] },
  { reasoning: "The search says sound.", text: ANSWER, chunkChars: 3 },
];

function agent(stores: Stores, baseURL: string, provider = PROVIDERS[0]!) {
  const app = createApp(
    defineConfig({
      stores,
      effects: {
        model: createLlmEffect(fromAiSdk(provider.model(baseURL))),
        search: createToolEffect(async ({ q }) => ({ hits: [`${q}: they hunt by sound`] }), {
          inputSchema: z.object({ q: z.string() }),
        }),
      },
    }),
  );
  return { app, loop: agentLoop$({ id: "owl", model: "model", tools: ["search"] }) };
}

async function collect(iterable: AsyncIterable<StreamPart>, limit = Number.POSITIVE_INFINITY): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of iterable) {
    out.push(part);
    if (out.length >= limit) break;
  }
  return out;
}

const textOf = (parts: StreamPart[], stepId: string, type = "text-delta") =>
  parts
    .filter((p) => p.stepId === stepId && p.type === type)
    .map((p) => p.delta)
    .join("");

for (const provider of PROVIDERS) {
  describe(`streaming through ${provider.name}`, () => {
    it("delivers deltas in order, indexed, whose concatenation is the journaled reply; the log holds none", async () => {
      server = await startOpenAiServer(byTurn(TURNS));
      const { app, loop } = agent(memoryStores(), server.baseURL, provider);
      const live = app.stream("owl");
      await app.start(loop, { executionId: "owl", input: { prompt: "How do barn owls hunt?" } });
      const parts = await collect(live);
      expect(parts.map((p) => p.index)).toEqual(parts.map((_, i) => i));
      const log = await app.log("owl");
      const replies = log.filter((r) => r.type === "loom.step.completed" && r.effectId === "model");
      expect(replies.map((r) => r.stepId)).toEqual(["owl#turn:0:model", "owl#turn:1:model"]);
      const texts = parts.filter((p) => p.type === "text-delta" && p.stepId === "owl#turn:1:model");
      expect(texts.length).toBeGreaterThan(5);
      expect(textOf(parts, "owl#turn:1:model")).toBe(ANSWER);
      expect(textOf(parts, "owl#turn:1:model")).toBe((replies[1]!.output as { text: string }).text);
      expect(parts.map((p) => p.type)).toEqual(
        expect.arrayContaining([
          "start-step",
          "tool-input-start",
          "tool-input-delta",
          "tool-call",
          "finish-step",
          "tool-result",
          "text-delta",
        ]),
      );
      expect(parts.find((p) => p.type === "tool-call")).toMatchObject({
        id: "call_S",
        toolName: "search",
        input: { q: "barn owl hunting" },
      });
      expect(parts.find((p) => p.type === "tool-result")).toMatchObject({
        id: "call_S",
        stepId: "owl#turn:0:tool:0",
        output: { hits: ["barn owl hunting: they hunt by sound"] },
      });
      // Deltas are not journaled: no record names a delta, and the journaled reply is the one copy of the text.
      const journal = JSON.stringify(log);
      expect(journal).not.toMatch(/"(text|reasoning|tool-input)-delta"/);
      expect(journal.split(ANSWER).length - 1).toBe(2); // the model step's output and the run's output
      await app.close();
    });
  });
}

describe("app.stream", () => {
  it("continues a reconnecting client from index k with exactly the parts after k", async () => {
    server = await startOpenAiServer(byTurn(TURNS));
    const { app, loop } = agent(memoryStores(), server.baseURL);
    const first = app.stream("owl");
    await app.start(loop, { executionId: "owl", input: { prompt: "x" } });
    const seen = await collect(first, 7); // the client goes away after 7 parts
    const k = seen.at(-1)!.index;
    const rest = await collect(app.stream("owl", { from: k + 1 }));
    const whole = await collect(app.stream("owl"));
    expect(rest[0]!.index).toBe(k + 1);
    expect([...seen, ...rest]).toEqual(whole);
    await app.close();
  });

  it("after a reload, shows the recorded turns from the journal and the in-flight turn live from its start", async () => {
    let turnOneCalls = 0;
    server = await startOpenAiServer((request) => {
      if (request.turn === 1 && turnOneCalls++ === 0) return { ...TURNS[1]!, holdAfterChunks: 5 };
      return byTurn(TURNS)(request);
    });
    const stores = memoryStores();
    const before = agent(stores, server.baseURL);
    await before.app.start(before.loop, { executionId: "owl", input: { prompt: "x" } });
    await server.held();
    await before.app.close(); // the tab goes away with turn 1 in flight
    const after = agent(stores, server.baseURL);
    const stream = after.app.stream("owl");
    await after.app.resume("owl", after.loop);
    const parts = await collect(stream);
    expect(await after.app.result("owl")).toMatchObject({ text: ANSWER });
    expect(server.requests.map((r) => r.turn)).toEqual([0, 1, 1]); // the recorded turn 0 is not asked again
    // Turn 0 comes from the journal (whole parts), turn 1 live from its first delta.
    expect(parts.filter((p) => p.stepId === "owl#turn:0:model").map((p) => p.type)).toEqual([
      "start-step",
      "tool-call",
      "finish-step",
    ]);
    expect(parts.find((p) => p.type === "tool-result")).toMatchObject({ id: "call_S" });
    expect(textOf(parts, "owl#turn:1:model")).toBe(ANSWER);
    expect(parts.filter((p) => p.stepId === "owl#turn:1:model" && p.type === "text-delta").length).toBeGreaterThan(5);
    await after.app.close();
  });

  it("a stream opened with a turn in flight has that turn from its first delta: what arrived before its code loaded is kept, in order, once", async () => {
    server = await startOpenAiServer(
      byTurn([{ text: "an answer streamed in small pieces", chunkChars: 2, holdAfterChunks: 6 }]),
    );
    const { app, loop } = agent(memoryStores(), server.baseURL);
    await app.start(loop, { executionId: "owl", input: { prompt: "x" } });
    await server.held(); // six chunks' deltas arrived, before any stream was opened
    const stream = app.stream("owl");
    const ui = app.stream("owl").toUIMessageStream().getReader();
    expect(await ui.read()).toMatchObject({ value: { type: "start" } });
    await app.stop("owl", "the user pressed stop");
    const parts = await collect(stream);
    expect(parts.map((p) => p.index)).toEqual(parts.map((_, i) => i));
    expect(parts.filter((p) => p.type === "start-step")).toHaveLength(1);
    expect(textOf(parts, "owl#turn:0:model")).toBe(
      "an answer streamed in small pieces".slice(0, textOf(parts, "owl#turn:0:model").length),
    );
    expect(textOf(parts, "owl#turn:0:model").length).toBeGreaterThan(0);
    await ui.cancel();
    await app.close();
  });

  it("app.stop aborts the model's stream", async () => {
    server = await startOpenAiServer(byTurn([{ text: "a long answer that never ends", holdAfterChunks: 2 }]));
    const { app, loop } = agent(memoryStores(), server.baseURL);
    const stream = app.stream("owl");
    await app.start(loop, { executionId: "owl", input: { prompt: "x" } });
    await server.held();
    await app.stop("owl", "the user pressed stop");
    for (let i = 0; i < 500 && server.clientsGone === 0; i++) await new Promise((r) => setTimeout(r, 2));
    expect(server.clientsGone).toBe(1);
    const parts = await collect(stream);
    expect(parts.map((p) => p.type)).not.toContain("finish-step");
    await expect(app.result("owl")).rejects.toThrow(/stopped/);
    await app.close();
  });

  it("speaks the AI SDK UI message stream protocol: readUIMessageStream builds the assistant message", async () => {
    server = await startOpenAiServer(byTurn(TURNS));
    const { app, loop } = agent(memoryStores(), server.baseURL);
    await app.start(loop, { executionId: "owl", input: { prompt: "x" } });
    await app.result("owl");
    let message: UIMessage | undefined;
    for await (const m of readUIMessageStream({ stream: app.stream("owl").toUIMessageStream() })) message = m;
    const parts = message!.parts;
    expect(parts.filter((p) => p.type === "step-start")).toHaveLength(2);
    expect(parts.find((p) => p.type === "tool-search")).toMatchObject({
      toolCallId: "call_S",
      state: "output-available",
      input: { q: "barn owl hunting" },
      output: { hits: ["barn owl hunting: they hunt by sound"] },
    });
    expect(parts.find((p) => p.type === "reasoning")).toMatchObject({ text: "The search says sound." });
    expect(parts.find((p) => p.type === "text")).toMatchObject({ text: ANSWER, state: "done" });
    await app.close();
  });
});
