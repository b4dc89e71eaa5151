// Replay serves a recorded model turn from the log without rebuilding its request: the fenced transcript
// (a walk of every message, the taint fence) is built only for a turn that runs. The request builder is
// spied on (vi.mock wraps fencedMessages, which the agent loop builds every model request with).
import { describe, expect, it, vi } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect, type Model } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import type { Message, ModelRequest } from "../../machines/helpers/messages.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import type { Stores } from "../../stores/types.js";

const built = vi.hoisted(() => ({ requests: 0 }));
vi.mock("../../machines/helpers/taint.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../machines/helpers/taint.js")>();
  return {
    ...original,
    fencedMessages: (messages: Message[]) => {
      built.requests++;
      return original.fencedMessages(messages);
    },
  };
});

const TURNS = 6;
const loop = agentLoop$({
  id: "replayer",
  model: "model",
  tools: ["search"],
  maxTurns: TURNS,
  warnTranscriptBytes: false,
});
const reply = (call: number) =>
  call < TURNS - 1 ? { toolCalls: [{ toolName: "search", input: { q: `q${call}` } }] } : { text: "done" };

function appOver(stores: Stores, model: Model) {
  return createApp(
    defineConfig({
      stores,
      effects: {
        model: createLlmEffect(model),
        search: createToolEffect(async ({ q }: { q: string }) => `hits for ${q}`),
      },
      execution: { snapshotEvery: false },
    }),
  );
}

describe("replay of an agent loop", () => {
  it("serves every recorded model turn without building its request", async () => {
    const stores = memoryStores();
    const live = appOver(
      stores,
      scriptedModel((_request, call) => reply(call)),
    );
    built.requests = 0;
    await live.start(loop, { executionId: "r", input: { prompt: "go" } });
    const output = await live.result("r");
    await live.close();
    // Live, each turn's request is built once, when its step runs.
    expect(built.requests).toBe(TURNS);

    built.requests = 0;
    const asked: ModelRequest[] = [];
    const again = appOver(
      stores,
      scriptedModel((request) => (asked.push(request), { text: "never asked" })),
    );
    const actor = await again.resume("r", loop);
    const log = await again.log("r");
    expect(actor.replay.recordsReplayed).toBe(log.length);
    expect(actor.replay.stepsServedFromLog).toBe(log.filter((r) => r.type === STEP_COMPLETED).length);
    expect(built.requests).toBe(0);
    expect(asked).toEqual([]);
    expect(await again.result("r")).toEqual(output);
    await again.close();
  });

  it("builds the request of the one turn a resume runs, the same request the run would have sent", async () => {
    const stores = memoryStores();
    const hangAt = 3;
    const sent: ModelRequest[] = [];
    let reached!: () => void;
    const hung = new Promise<void>((resolve) => (reached = resolve));
    const script = scriptedModel((request, call) => (sent.push(structuredClone(request)), reply(call)));
    // The model of the turn `hangAt` is asked and never answers: the process "dies" mid-call.
    const hanging: Model = {
      id: "hanging",
      generate: (request, ctx) => {
        if (!ctx.stepId.endsWith(`turn:${hangAt}:model`)) return script.generate(request, ctx);
        sent.push(structuredClone(request));
        reached();
        return new Promise<never>(() => undefined);
      },
    };
    const first = appOver(stores, hanging);
    await first.start(loop, { executionId: "r", input: { prompt: "go" } });
    await hung;
    await first.close();

    built.requests = 0;
    const resumed: ModelRequest[] = [];
    const second = appOver(
      stores,
      scriptedModel((request, call) => (resumed.push(structuredClone(request)), reply(call))),
    );
    const actor = await second.resume("r", loop);
    expect(actor.replay.stepsServedFromLog).toBe(2 * hangAt);
    expect(actor.replay.stepsToRun).toBe(1);
    await second.result("r");
    // The interrupted turn and the ones after it: each built once, none of the served ones.
    expect(built.requests).toBe(TURNS - hangAt);
    expect(resumed[0]).toEqual(sent[hangAt]);
    await second.close();
  });
});
