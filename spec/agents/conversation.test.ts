// ADR 0137 D4: two unrelated consumers of one registered { messages } -> { summary } effect.
import { describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { conversation$ } from "../../actors/agents/conversation.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createSummarizerEffect } from "../../actors/agents/summarizer.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import { workloadEffects } from "../support/workload.js";

describe("ADR 0137 D4: the second consumer", () => {
  it("D4: one registered summarizer serves agentLoop$ compaction.toolId and the conversation's budget.summarizerToolId", async () => {
    const summarizerModel = scriptedModel(() => ({ text: "rolling summary" }));
    const { effects } = workloadEffects(10);
    const stores = memoryStores();
    const app = createApp(
      defineConfig({
        stores,
        effects: {
          ...effects,
          chat: createLlmEffect(scriptedModel(() => ({ text: "a".repeat(900) }))),
          summarize: createSummarizerEffect(summarizerModel),
        },
      }),
    );

    await app.start(
      agentLoop$({
        id: "agent",
        model: "model",
        tools: ["search"],
        compaction: { toolId: "summarize", afterBytes: 6_000 },
      }),
      { executionId: "agent-1", input: { prompt: "go" } },
    );
    await app.result("agent-1");

    const chat = conversation$({
      id: "support",
      model: "chat",
      system: "You help.",
      budget: { summarizerToolId: "summarize", maxBytes: 3_000 },
    });
    const actor = await app.start(chat, { executionId: "chat-1" });
    for (let i = 0; i < 6; i++) {
      if (i === 3) await actor.sendAsync({ type: "NEW_SESSION" });
      await actor.sendAsync({ type: "USER_MESSAGE", text: `question ${i} ${"q".repeat(300)}` });
      await actor.settled();
    }
    await actor.sendAsync({ type: "END" });
    const output = (await app.result("chat-1")) as { summaries: number; sessions: number; bytes: number };
    expect(output.sessions).toBe(2);
    expect(output.summaries).toBeGreaterThan(0);
    expect(output.bytes).toBeLessThan(3_000 + 2_500);

    const compactSteps = (id: string) =>
      app
        .log(id)
        .then((log) => log.filter((r) => r.type === STEP_COMPLETED && r.effectId === "summarize").map((r) => r.stepId));
    expect((await compactSteps("agent-1")).every((s) => /^agent#turn:\d+:compact$/.test(String(s)))).toBe(true);
    expect((await compactSteps("chat-1")).every((s) => /^support#msg:\d+:summarize$/.test(String(s)))).toBe(true);
    expect((await compactSteps("agent-1")).length).toBeGreaterThan(0);
  });

  it("D4: a conversation resumed in a fresh app (a new session) re-runs no recorded reply or summary", async () => {
    const stores = memoryStores();
    const chatModel = scriptedModel((_r, call) => ({ text: `reply ${call} ${"r".repeat(500)}` }));
    const summarizer = scriptedModel(() => ({ text: "summary" }));
    const effects = { chat: createLlmEffect(chatModel), summarize: createSummarizerEffect(summarizer) };
    const chat = conversation$({ id: "s", model: "chat", budget: { summarizerToolId: "summarize", maxBytes: 1_500 } });
    const app1 = createApp(defineConfig({ stores, effects }));
    const a1 = await app1.start(chat, { executionId: "c" });
    for (let i = 0; i < 4; i++) {
      await a1.sendAsync({ type: "USER_MESSAGE", text: `hi ${i}` });
      await a1.settled();
    }
    await app1.close();
    const calls = [chatModel.calls, summarizer.calls];
    const app2 = createApp(defineConfig({ stores, effects, logics: [chat] }));
    const a2 = await app2.resume("c");
    expect([chatModel.calls, summarizer.calls]).toEqual(calls);
    await a2.sendAsync({ type: "USER_MESSAGE", text: "back again" });
    await a2.settled();
    expect(chatModel.calls).toBe(calls[0]! + 1);
    await a2.sendAsync({ type: "END" });
    expect(await app2.result("c")).toMatchObject({ sessions: 1 });
  });
});
