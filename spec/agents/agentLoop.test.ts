// agentLoop$: turns, step ids, concurrent tools in call order, unknown tools, maxTurns, bad config.
import { describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { ConfigError } from "../../actors/errors.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import type { ModelRequest } from "../../machines/helpers/messages.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED } from "../../stores/schema.js";

describe("agentLoop$", () => {
  it("runs model -> tools -> model until an answer, with step ids <loop>#turn:<i>:model|tool:<j>", async () => {
    const requests: ModelRequest[] = [];
    const model = scriptedModel((request, call) => {
      requests.push(structuredClone(request));
      return call === 0
        ? {
            toolCalls: [
              { toolName: "search", input: { q: "owls" } },
              { toolName: "lookup", input: { id: 7 } },
            ],
          }
        : { text: "Owls hunt at night." };
    });
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          model: createLlmEffect(model),
          search: createToolEffect(async ({ q }: { q: string }) => [`${q} hit`]),
          lookup: createToolEffect(async ({ id }: { id: number }) => ({ id, name: "barn owl" })),
        },
      }),
    );
    const loop = agentLoop$({
      id: "researcher",
      model: "model",
      tools: ["search", { name: "lookup", description: "by id" }],
      system: "Be brief.",
    });
    await app.start(loop, { executionId: "r", input: { prompt: "Tell me about owls" } });
    expect(await app.result("r")).toEqual({
      text: "Owls hunt at night.",
      turns: 2,
      transcriptBytes: expect.any(Number),
      sawTaintFrom: [],
    });
    const steps = (await app.log("r")).filter((r) => r.type === STEP_COMPLETED).map((r) => r.stepId);
    expect(steps[0]).toBe("researcher#turn:0:model");
    expect(steps.at(-1)).toBe("researcher#turn:1:model");
    expect(new Set(steps)).toEqual(
      new Set([
        "researcher#turn:0:model",
        "researcher#turn:0:tool:0",
        "researcher#turn:0:tool:1",
        "researcher#turn:1:model",
      ]),
    );
    expect(requests[0]!.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Tell me about owls" },
    ]);
    expect(requests[0]!.tools).toEqual([{ name: "search" }, { name: "lookup", description: "by id" }]);
    expect(requests[1]!.messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "call_0_0", toolName: "search", input: { q: "owls" } },
          { id: "call_0_1", toolName: "lookup", input: { id: 7 } },
        ],
      },
      { role: "tool", content: ["owls hit"], toolCallId: "call_0_0", toolName: "search" },
      { role: "tool", content: { id: 7, name: "barn owl" }, toolCallId: "call_0_1", toolName: "lookup" },
    ]);
  });

  it("runs one turn's tools concurrently and puts their results in call order", async () => {
    const order: string[] = [];
    const gate: Record<string, () => void> = {};
    const slow = (name: string) =>
      createToolEffect(async () => {
        order.push(`start:${name}`);
        await new Promise<void>((resolve) => (gate[name] = resolve));
        order.push(`end:${name}`);
        return name;
      });
    let seen: ModelRequest | undefined;
    const model = scriptedModel((request, call) => {
      if (call === 1) seen = request;
      return call === 0
        ? {
            toolCalls: [
              { toolName: "a", input: {} },
              { toolName: "b", input: {} },
            ],
          }
        : { text: "ok" };
    });
    const app = createApp(
      defineConfig({ stores: memoryStores(), effects: { model: createLlmEffect(model), a: slow("a"), b: slow("b") } }),
    );
    const actor = await app.start(agentLoop$({ id: "p", model: "model", tools: ["a", "b"] }), {
      executionId: "p",
      input: { prompt: "go" },
    });
    while (!gate.a || !gate.b) await new Promise((r) => setTimeout(r, 1));
    expect(order).toEqual(["start:a", "start:b"]);
    gate.b!();
    await new Promise((r) => setTimeout(r, 5));
    gate.a!();
    await actor.settled();
    await app.result("p");
    expect(order).toEqual(["start:a", "start:b", "end:b", "end:a"]);
    expect(seen!.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["a", "b"]);
  });

  it("answers a made-up tool with an error result and runs nothing for it", async () => {
    let seen: ModelRequest | undefined;
    const model = scriptedModel((request, call) =>
      call === 0 ? { toolCalls: [{ toolName: "rm_rf", input: {} }] } : ((seen = request), { text: "sorry" }),
    );
    const app = createApp(defineConfig({ stores: memoryStores(), effects: { model: createLlmEffect(model) } }));
    await app.start(agentLoop$({ id: "u", model: "model" }), { executionId: "u", input: { prompt: "x" } });
    expect(await app.result("u")).toMatchObject({ text: "sorry", turns: 2 });
    expect(seen!.messages.at(-1)).toMatchObject({ role: "tool", content: { error: 'unknown tool "rm_rf"' } });
  });

  it("gives a failing tool's error to the model as its result", async () => {
    let seen: ModelRequest | undefined;
    const model = scriptedModel((request, call) =>
      call === 0 ? { toolCalls: [{ toolName: "t", input: {} }] } : ((seen = request), { text: "handled" }),
    );
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          model: createLlmEffect(model),
          t: createToolEffect(async () => {
            throw new Error("rate limited");
          }),
        },
      }),
    );
    await app.start(agentLoop$({ id: "f", model: "model", tools: ["t"] }), {
      executionId: "f",
      input: { prompt: "x" },
    });
    expect(await app.result("f")).toMatchObject({ text: "handled" });
    expect(seen!.messages.at(-1)).toMatchObject({ role: "tool", content: { error: "rate limited" } });
  });

  it("stops at maxTurns model calls", async () => {
    const model = scriptedModel(() => ({ text: "again", toolCalls: [{ toolName: "t", input: {} }] }));
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { model: createLlmEffect(model), t: createToolEffect(async () => 1) },
      }),
    );
    await app.start(agentLoop$({ id: "m", model: "model", tools: ["t"], maxTurns: 3 }), {
      executionId: "m",
      input: { messages: [{ role: "user", content: "loop" }] },
    });
    expect(await app.result("m")).toMatchObject({ text: "again", turns: 3 });
    expect(model.calls).toBe(3);
  });

  it("refuses bad configuration with ConfigError naming the option", () => {
    expect(() => agentLoop$({ id: "", model: "m" })).toThrow(/agentLoop\$.id/);
    expect(() => agentLoop$({ id: "a", model: "" })).toThrow(ConfigError);
    expect(() => agentLoop$({ id: "a", model: "m", maxTurns: 0 })).toThrow(/agentLoop\$.maxTurns/);
    expect(() => agentLoop$({ id: "a", model: "m", compaction: { toolId: "s", afterBytes: -1 } })).toThrow(
      /compaction.afterBytes/,
    );
    expect(() => agentLoop$({ id: "a", model: "m", warnTranscriptBytes: 0 })).toThrow(/warnTranscriptBytes/);
    expect(() => agentLoop$({ id: "a", model: "m", tools: [3 as never] })).toThrow(/agentLoop\$.tools/);
  });

  it("refuses at start a loop whose model or tools are not registered", async () => {
    const app = createApp(
      defineConfig({ stores: memoryStores(), effects: { model: createLlmEffect(scriptedModel([{ text: "x" }])) } }),
    );
    await expect(
      app.start(agentLoop$({ id: "a", model: "model", tools: ["search"] }), {
        executionId: "a",
        input: { prompt: "x" },
      }),
    ).rejects.toThrow(/invokes "search"/);
  });
});
