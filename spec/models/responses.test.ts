// The OpenAI Responses API through the real @ai-sdk/openai client (`openai(id)`, the AI SDK's default for
// OpenAI) against a Responses endpoint on 127.0.0.1: a turn's reasoning item and the other items' ids are
// journaled with the reply and sent back on the next turn, as streamText does across steps, also from a
// fresh app that resumed the run.
import { createOpenAI } from "@ai-sdk/openai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import type { Stores } from "../../stores/types.js";
import { startResponsesServer, type ResponsesServer, type ResponsesTurn } from "../support/responsesServer.js";

let server: ResponsesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const TURNS: ResponsesTurn[] = [
  {
    reasoning: { summary: "The user wants owls; search first.", encrypted: "gAAAA-encrypted-0" },
    text: "Searching first.",
    toolCalls: [{ callId: "call_owls", name: "search", arguments: '{"q":"owls"}' }],
    usage: { input: 20, output: 30, reasoning: 24 },
  },
  { reasoning: { summary: "Enough.", encrypted: "gAAAA-encrypted-1" }, text: "Barn owls hunt by sound." },
];

function appOver(stores: Stores, baseURL: string, stream: boolean, ran: string[]) {
  const openai = createOpenAI({ baseURL, apiKey: "test-key" });
  return createApp(
    defineConfig({
      stores,
      effects: {
        model: createLlmEffect(fromAiSdk(openai("gpt-5-mini"), { stream })),
        search: createToolEffect(async ({ q }: { q: string }) => (ran.push(q), [`${q}: barn owl`]), {
          needsApproval: true,
        }),
      },
    }),
  );
}

for (const stream of [true, false]) {
  describe(`openai(id), the Responses API (${stream ? "streamed" : "doGenerate"})`, () => {
    it("sends the first turn's reasoning item back on the next turn (by reference, as stored), from a resumed app", async () => {
      server = await startResponsesServer((_body, n) => TURNS[n]!);
      const stores = memoryStores();
      const ran: string[] = [];
      const loop = agentLoop$({ id: "owl", model: "model", tools: ["search"] });
      const first = appOver(stores, server.baseURL, stream, ran);
      await first.start(loop, { executionId: "owl", input: { prompt: "How do owls hunt?" } });
      await vi.waitFor(async () => {
        const log = await first.log("owl");
        expect(log.some((r) => r.type === STEP_COMPLETED && r.stepId === "owl#turn:0:model")).toBe(true);
      });
      await first.close();

      // A fresh app resumes the parked run: the next request is built from the journal alone.
      const second = appOver(stores, server.baseURL, stream, ran);
      const actor = await second.resume("owl", loop);
      actor.send({ type: "TOOL_APPROVAL", toolCallId: "call_owls", approved: true });
      expect(await second.result("owl")).toMatchObject({ text: "Barn owls hunt by sound.", turns: 2 });
      // The journal keeps the turn's items in order with their ids; the text once (the reply's `text`).
      const turn0 = (await second.log("owl")).find((r) => r.type === STEP_COMPLETED && r.stepId === "owl#turn:0:model");
      const reply = (turn0 && "output" in turn0 ? turn0.output : undefined) as { text?: string; parts?: unknown[] };
      expect(reply.text).toBe("Searching first.");
      expect(reply.parts).toEqual([
        expect.objectContaining({
          type: "reasoning",
          providerMetadata: { openai: expect.objectContaining({ itemId: "rs_0" }) },
        }),
        { type: "text", providerMetadata: { openai: expect.objectContaining({ itemId: "msg_0" }) } },
        expect.objectContaining({ type: "tool-call", toolCallId: "call_owls" }),
      ]);
      await second.close();
      expect(ran).toEqual(["owls"]);

      expect(server.requests).toHaveLength(2);
      const input = server.requests[1]!.input;
      // OpenAI keeps the items (store: true, its default): the reasoning and message items are sent as references,
      // before the call.
      expect(input).toContainEqual({ type: "item_reference", id: "rs_0" });
      expect(input).toContainEqual({ type: "item_reference", id: "msg_0" });
      const reasoningAt = input.findIndex((i) => i.id === "rs_0");
      const callAt = input.findIndex((i) => i.type === "function_call" && i.call_id === "call_owls");
      const outputAt = input.findIndex((i) => i.type === "function_call_output");
      expect(reasoningAt).toBeGreaterThanOrEqual(0);
      expect(reasoningAt).toBeLessThan(callAt);
      expect(callAt).toBeLessThan(outputAt);
      expect(input[outputAt]).toMatchObject({ call_id: "call_owls" });
    });

    it("sends the reasoning item with its encrypted content when the provider keeps nothing (store: false)", async () => {
      server = await startResponsesServer((_body, n) => TURNS[n]!);
      const ran: string[] = [];
      const app = appOver(memoryStores(), server.baseURL, stream, ran);
      const loop = agentLoop$({
        id: "owl",
        model: "model",
        tools: ["search"],
        callOptions: { providerOptions: { openai: { store: false, include: ["reasoning.encrypted_content"] } } },
      });
      const actor = await app.start(loop, { executionId: "owl", input: { prompt: "How do owls hunt?" } });
      await vi.waitFor(async () => {
        const log = await app.log("owl");
        expect(log.some((r) => r.type === STEP_COMPLETED && r.stepId === "owl#turn:0:model")).toBe(true);
      });
      actor.send({ type: "TOOL_APPROVAL", toolCallId: "call_owls", approved: true });
      expect(await app.result("owl")).toMatchObject({ text: "Barn owls hunt by sound." });
      await app.close();

      const input = server.requests[1]!.input;
      expect(input).toContainEqual({
        type: "reasoning",
        id: "rs_0",
        encrypted_content: "gAAAA-encrypted-0",
        summary: [{ type: "summary_text", text: "The user wants owls; search first." }],
      });
      expect(input).toContainEqual(expect.objectContaining({ role: "assistant", content: "Searching first." }));
      expect(input).toContainEqual(
        expect.objectContaining({ type: "function_call", call_id: "call_owls", name: "search" }),
      );
    });
  });
}
