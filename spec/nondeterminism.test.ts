// A log that no longer matches the machine fails resume loudly, with the facts.
import { describe, expect, it } from "vitest";
import { setup } from "xstate";
import { agentLoop$ } from "../actors/agents/agentLoop.js";
import { createLlmEffect } from "../actors/agents/model.js";
import { createApp } from "../actors/app.js";
import { simulatedClock } from "../actors/clock.js";
import { defineConfig } from "../actors/config.js";
import { createToolEffect } from "../actors/effects/effect.js";
import { NonDeterminismError } from "../actors/errors.js";
import { effectActor } from "../machines/helpers/effectActor.js";
import { memoryStores } from "../stores/memory.js";
import { STEP_COMPLETED } from "../stores/schema.js";
import type { StoredRecord } from "../stores/types.js";
import { demoMachine } from "./support/demoMachine.js";
import { countedDemoEffects } from "./support/harness.js";
import { rejection } from "./lifecycle/support.js";
import { checkReplay } from "../upgrades.js";

async function recordedLog(): Promise<StoredRecord[]> {
  const stores = memoryStores();
  const clock = simulatedClock(0);
  const { effects } = countedDemoEffects();
  const app = createApp(defineConfig({ stores, effects, clock, execution: { snapshotEvery: false } }));
  const actor = await app.start(demoMachine, { executionId: "r", input: { topic: "t" } });
  await actor.settled();
  await actor.sendAsync({ type: "APPROVE" });
  await app.result("r");
  return stores.events.read("r");
}

async function resumeTampered(log: StoredRecord[]) {
  const stores = memoryStores();
  await stores.events.append(
    "r",
    0,
    log.map((r, i) => ({ ...r, seq: i + 1 })),
  );
  const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects, logics: [demoMachine] }));
  return app.resume("r");
}

describe("NonDeterminismError", () => {
  it("names execution, seq, expected and actual when a step id was changed", async () => {
    const log = await recordedLog();
    const i = log.findIndex((r) => r.stepId === "demo#write:1");
    log[i] = { ...log[i]!, stepId: "demo#write:9" };
    const error = await resumeTampered(log).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonDeterminismError);
    expect(error).toMatchObject({
      executionId: "r",
      seq: i + 1,
      expected: "demo#write:9",
      actual: { pendingSteps: ["demo#write:1"] },
    });
    expect((error as Error).message).toContain('Execution "r" diverged from its log at seq');
  });

  it("fails when a record was removed", async () => {
    const log = await recordedLog();
    const i = log.findIndex((r) => r.type === "loom.event.received");
    log.splice(i, 1);
    const error = await resumeTampered(log).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonDeterminismError);
    expect((error as NonDeterminismError).seq).toBe(i + 1);
  });

  it("fails when a TRANSITION no longer matches what the machine does", async () => {
    const log = await recordedLog();
    const i = log.findIndex((r) => r.type === "loom.transition" && r.to === "writing");
    log[i] = { ...log[i]!, to: "published" };
    const error = (await resumeTampered(log).catch((e: unknown) => e)) as NonDeterminismError;
    expect(error).toBeInstanceOf(NonDeterminismError);
    expect(error.expected).toMatchObject({ to: "published" });
    expect(error.actual).toMatchObject({ to: "writing" });
    expect(error.seq).toBe(i + 1);
  });

  it("fails when the machine changed under an old log", async () => {
    const log = await recordedLog();
    const changed = demoMachine.provide({}).config;
    const { createMachine } = await import("xstate");
    const edited = createMachine({ ...(changed as object), id: "demo", initial: "waiting" } as never);
    const stores = memoryStores();
    await stores.events.append("r", 0, log);
    const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
    await expect(app.resume("r", edited)).rejects.toBeInstanceOf(NonDeterminismError);
  });
});

// The record names the effect its outcome came from: an outcome of one effect never feeds a step that now
// invokes another (an invoke's `src` changed, an agent's model effect id changed) without a new version.
describe("NonDeterminismError when the effect under a recorded step changed", () => {
  const flow = (src: "work" | "refund") =>
    setup({ actors: { work: effectActor<null, string>(), refund: effectActor<null, string>() } }).createMachine({
      id: "payment",
      initial: "paying",
      states: {
        // One machine, two spellings of its `src` (the union is not a src the typed invoke takes).
        paying: { invoke: { src: src as "work", id: "pay", input: null, onDone: "confirming" } },
        confirming: { on: { CONFIRM: "paid" } },
        paid: { type: "final" },
      },
    });

  it("a machine whose invoke src changed (work to refund) is refused on resume, naming both effects; nothing runs or is written", async () => {
    const stores = memoryStores();
    const ran: string[] = [];
    const effects = {
      work: createToolEffect(async () => (ran.push("work"), "worked")),
      refund: createToolEffect(async () => (ran.push("refund"), "refunded")),
    };
    const first = createApp(defineConfig({ stores, effects, execution: { snapshotEvery: false } }));
    const actor = await first.start(flow("work"), { executionId: "p", input: null });
    await actor.settled();
    expect(actor.getSnapshot().value).toBe("confirming");
    await first.close();
    const head = await stores.events.head("p");
    const completed = (await stores.events.read("p")).find((r) => r.type === STEP_COMPLETED)!;
    expect(completed.effectId).toBe("work");

    const second = createApp(defineConfig({ stores, effects, logics: [flow("refund")] }));
    const error = await rejection(second.resume("p"));
    expect(error).toBeInstanceOf(NonDeterminismError);
    expect(error).toMatchObject({
      executionId: "p",
      seq: completed.seq,
      expected: { effectId: "work" },
      actual: { effectId: "refund" },
    });
    expect((error as Error).message).toContain("payment#pay:1");
    expect(await stores.events.head("p"), "nothing written").toBe(head);
    expect(ran).toEqual(["work"]);
    const report = await checkReplay(second, flow("refund"));
    expect(report.results).toEqual([expect.objectContaining({ executionId: "p", status: "diverges" })]);
    await second.close();
  });

  it("an agent whose model effect id changed is refused on resume; the old model's recorded reply is not served to the new one", async () => {
    const stores = memoryStores();
    let parked!: () => void;
    const reached = new Promise<void>((resolve) => (parked = resolve));
    const calls: string[] = [];
    const model = (id: string, hang: boolean) =>
      createLlmEffect({
        id,
        async generate(request, ctx) {
          calls.push(id);
          if (hang && request.messages.some((m) => m.role === "tool")) {
            parked();
            await new Promise((_, reject) =>
              ctx.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }),
            );
          }
          return request.messages.some((m) => m.role === "tool")
            ? { text: "answer" }
            : { toolCalls: [{ toolName: "search", input: {} }] };
        },
      });
    const search = createToolEffect(async () => ({ hits: 1 }));
    const agent = (modelId: string) =>
      agentLoop$({ id: "researcher", model: modelId, tools: ["search"], warnTranscriptBytes: false });
    const first = createApp(
      defineConfig({ stores, effects: { model: model("model", true), search }, execution: { snapshotEvery: false } }),
    );
    await first.start(agent("model"), { executionId: "r", input: { prompt: "go" } });
    await reached; // turn 0 (model, tool) is journaled; turn 1's model call is in flight
    await first.close();
    const head = await stores.events.head("r");

    const second = createApp(
      defineConfig({
        stores,
        effects: { model: model("model", false), model2: model("model2", false), search },
        logics: [agent("model2")],
      }),
    );
    const error = await rejection(second.resume("r"));
    expect(error).toBeInstanceOf(NonDeterminismError);
    expect(error).toMatchObject({ executionId: "r", expected: { effectId: "model" }, actual: { effectId: "model2" } });
    expect(await stores.events.head("r"), "nothing written").toBe(head);
    expect(calls, "no model call after the change").toEqual(["model", "model"]);
    await second.close();
  });
});
