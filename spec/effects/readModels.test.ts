// Read models on @xstate/store: the execution list with status, and per-execution step and usage counters.
import { describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import type { ExecutionView } from "../../actors/journal/readModels.js";
import { createReadModels } from "../../readModels.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import { demoMachine } from "../support/demoMachine.js";
import { countingModel, modelLoop, oneStep } from "./helpers.js";

function config(stores = memoryStores()) {
  return defineConfig({
    stores,
    logics: [demoMachine],
    effects: {
      model: countingModel({ inputTokens: 10, outputTokens: 2 }).effect,
      research: createToolEffect(async ({ topic }: { topic: string }) => `notes on ${topic}`),
      write: createToolEffect(async () => "draft"),
      broken: createToolEffect(async () => {
        throw new Error("nope");
      }),
    },
    capabilities: { grants: { "one-broken": ["broken"] } },
  });
}

describe("read models", () => {
  it("lists the executions that exist at creation, with status and counters read from their journals", async () => {
    const stores = memoryStores();
    const app1 = createApp(config(stores));
    await app1.start(modelLoop(2), { executionId: "a-model", subject: "user-1" });
    await app1.result("a-model");
    await app1.start(oneStep("broken"), { executionId: "b-broken" });
    await app1.result("b-broken").catch(() => undefined);
    const waiting = await app1.start(demoMachine, { executionId: "c-waiting", input: { topic: "owls" } });
    await waiting.settled();
    await app1.close();

    const app2 = createApp(config(stores));
    const models = createReadModels(app2);
    await models.ready;
    expect(models.list().map((v) => [v.executionId, v.status])).toEqual([
      ["a-model", "done"],
      ["b-broken", "error"],
      ["c-waiting", "running"],
    ]);
    expect(models.execution("a-model")).toMatchObject({
      logicId: "looper",
      subject: "user-1",
      steps: { completed: 2, failed: 0 },
      usage: { modelCalls: 2, inputTokens: 20, outputTokens: 4, totalTokens: 24 },
    } satisfies Partial<ExecutionView>);
    expect(models.execution("b-broken")).toMatchObject({
      steps: { completed: 0, failed: 1 },
      lastStoppedAt: "effect",
      usage: { modelCalls: 0 },
    });
    expect(models.execution("c-waiting")).toMatchObject({ logicId: "demo", steps: { completed: 1, failed: 0 } });
  });

  it("follows live appends: a new execution appears, its counters grow, its status changes, and subscribers see it", async () => {
    const app = createApp(config());
    const models = createReadModels(app);
    await models.ready;
    const statuses: string[] = [];
    models.executions.subscribe(({ context }) => {
      const view = context.executions["live"];
      if (view && statuses.at(-1) !== view.status) statuses.push(view.status);
    });
    const actor = await app.start(demoMachine, { executionId: "live", input: { topic: "t" } });
    await actor.settled();
    expect(models.execution("live")).toMatchObject({ status: "running", steps: { completed: 1 } });
    await actor.sendAsync({ type: "APPROVE" });
    await app.result("live");
    expect(models.execution("live")).toMatchObject({
      status: "done",
      steps: { completed: 2 },
      head: (await app.log("live")).length,
    });
    expect(statuses).toEqual(["running", "done"]);
  });

  it("counts each record once when appends race the initial load", async () => {
    const stores = memoryStores();
    const app1 = createApp(config(stores));
    const first = await app1.start(demoMachine, { executionId: "race", input: { topic: "t" } });
    await first.settled();
    await app1.close();
    const app2 = createApp(config(stores));
    const actor = await app2.resume("race");
    // Hold the catalogue read until the execution has appended more: the log read then holds records
    // the read model already folded live.
    const list = stores.events.listExecutions.bind(stores.events);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    stores.events.listExecutions = async () => (await held, list());
    const models = createReadModels(app2);
    await actor.sendAsync({ type: "APPROVE" });
    await app2.result("race");
    expect(models.execution("race")).toMatchObject({ steps: { completed: 1 } });
    release();
    await models.ready;
    const log = await app2.log("race");
    expect(models.execution("race")).toMatchObject({
      status: "done",
      steps: {
        completed: log.filter((r) => r.type === STEP_COMPLETED).length,
        failed: log.filter((r) => r.type === STEP_FAILED).length,
      },
    });
    expect(models.execution("race")!.steps.completed).toBe(2);
  });

  it("stops following the app once disposed", async () => {
    const app = createApp(config());
    const models = createReadModels(app);
    await models.ready;
    models.dispose();
    await app.start(modelLoop(1), { executionId: "late" });
    await app.result("late");
    expect(models.execution("late")).toBeUndefined();
  });
});
