// Metering and quotas: model usage on STEP_COMPLETED, summed per execution from the journal, and
// per-execution limits that hold across a resume.
import { describe, expect, it } from "vitest";
import { assign, setup } from "xstate";
import { createApp } from "../../actors/app.js";
import type { RuntimeEvents } from "../../actors/bus.js";
import { QuotaExceededError } from "../../actors/effects/capabilities.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { effectActor, stepInput } from "../../machines/helpers/effectActor.js";
import type { ModelReply, ModelRequest } from "../../machines/helpers/messages.js";
import { memoryStores } from "../../stores/memory.js";
import { EXECUTION_ENDED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import { countingModel, modelLoop, recordsOf } from "./helpers.js";

describe("metering", () => {
  it("records a model reply's usage on its STEP_COMPLETED record and sums it per execution", async () => {
    const model = countingModel({ inputTokens: 100, outputTokens: 20 });
    const summarize = countingModel({ inputTokens: 7, outputTokens: 3 });
    const app = createApp(
      defineConfig({ stores: memoryStores(), effects: { model: model.effect, summarize: summarize.effect } }),
    );
    const steps: Parameters<RuntimeEvents["step"]>[0][] = [];
    app.on("step", (event) => steps.push(event));
    await app.start(modelLoop(3), { executionId: "m" });
    await app.result("m");
    const completed = await recordsOf(app, "m", STEP_COMPLETED);
    expect(completed.map((r) => r.usage)).toEqual([
      { inputTokens: 100, outputTokens: 20 },
      { inputTokens: 100, outputTokens: 20 },
      { inputTokens: 100, outputTokens: 20 },
    ]);
    expect(steps.map((s) => s.usage)).toEqual(completed.map((r) => r.usage));
    expect(await app.usage("m")).toEqual({ modelCalls: 3, inputTokens: 300, outputTokens: 60, totalTokens: 360 });
    // Any llm effect is metered by its kind, whatever its name (the built-in summarizer included).
    await app.invokeTransient("summarize", { messages: [], tools: [] });
    await app.start(modelLoop(1, { id: "summ" }), { executionId: "s" });
    await app.result("s");
    expect(await app.usage("s")).toMatchObject({ modelCalls: 1, totalTokens: 120 });
  });

  it("records no usage for tools, nor for a reply without well-formed usage", async () => {
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { model: { kind: "llm", run: async () => ({ text: "hi", usage: { inputTokens: "many" } }) } },
      }),
    );
    await app.start(modelLoop(1), { executionId: "u" });
    await app.result("u");
    const [record] = await recordsOf(app, "u", STEP_COMPLETED);
    expect(record).not.toHaveProperty("usage");
    expect(await app.usage("u")).toEqual({ modelCalls: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0 });
    await expect(app.usage("ghost")).rejects.toMatchObject({ name: "UnknownExecutionError" });
  });
});

describe("quotas", () => {
  it("refuses the call past maxModelCalls with QuotaExceededError: the model is not called and the execution ends with it", async () => {
    const model = countingModel();
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { model: model.effect },
        capabilities: { quotas: { maxModelCalls: 2 } },
      }),
    );
    await app.start(modelLoop(5), { executionId: "q" });
    await expect(app.result("q")).rejects.toMatchObject({
      name: "ExecutionFailedError",
      error: { name: "QuotaExceededError", quota: "maxModelCalls", limit: 2, used: 2 },
    });
    expect(model.requests).toHaveLength(2);
    const log = await app.log("q");
    expect(log.filter((r) => r.type === STEP_COMPLETED)).toHaveLength(2);
    expect(log.find((r) => r.type === STEP_FAILED)).toMatchObject({
      stepId: "looper#turn:2:model",
      stoppedAt: "capabilities",
      error: { code: "LOOM_QUOTA_EXCEEDED" },
    });
    expect(log.at(-1)).toMatchObject({ type: EXECUTION_ENDED, status: "error", error: { name: "QuotaExceededError" } });
    expect(await app.usage("q")).toMatchObject({ modelCalls: 2 });
  });

  it("refuses a call once maxTokens are used", async () => {
    const model = countingModel({ inputTokens: 10, outputTokens: 5 });
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { model: model.effect },
        capabilities: { quotas: { maxTokens: 25 } },
      }),
    );
    await app.start(modelLoop(5, { handleError: true }), { executionId: "t" });
    expect(await app.result("t")).toMatchObject({
      replies: ["reply 1", "reply 2"],
      error: { name: "QuotaExceededError", quota: "maxTokens", limit: 25, used: 30 },
    });
    expect(model.requests).toHaveLength(2);
  });

  it("counts from the journal, so a resumed execution keeps what it used before", async () => {
    const machine = setup({
      types: {} as { context: { turn: number } },
      actors: { model: effectActor<ModelRequest, ModelReply>() },
    }).createMachine({
      id: "paced",
      context: { turn: 0 },
      initial: "calling",
      states: {
        calling: {
          invoke: {
            src: "model",
            id: "model",
            input: ({ context }) => stepInput(`turn:${context.turn}:model`, { messages: [], tools: [] }),
            onDone: { target: "waiting", actions: assign({ turn: ({ context }) => context.turn + 1 }) },
          },
        },
        waiting: { on: { GO: "calling", STOP: "done" } },
        done: { type: "final" },
      },
    });
    const stores = memoryStores();
    const model = countingModel();
    const config = () =>
      defineConfig({
        stores,
        effects: { model: model.effect },
        logics: [machine],
        capabilities: { quotas: { maxModelCalls: 3 } },
      });
    const app1 = createApp(config());
    const actor1 = await app1.start(machine, { executionId: "p" });
    await actor1.settled();
    await actor1.sendAsync({ type: "GO" });
    await actor1.settled();
    await app1.close();
    expect(model.requests).toHaveLength(2);

    const app2 = createApp(config());
    const actor2 = await app2.resume("p");
    expect(await app2.usage("p")).toMatchObject({ modelCalls: 2, totalTokens: 30 });
    await actor2.sendAsync({ type: "GO" });
    await actor2.settled();
    expect(model.requests).toHaveLength(3);
    await actor2.sendAsync({ type: "GO" });
    await expect(app2.result("p")).rejects.toMatchObject({ error: { name: "QuotaExceededError", used: 3 } });
    expect(model.requests).toHaveLength(3);

    // A fresh app whose first usage read races a live model call counts each call once.
    const log = await stores.events.read("p");
    const thirdCall = log.findLastIndex((r) => r.type === STEP_COMPLETED);
    const fresh = memoryStores();
    await fresh.events.append("p", 0, log.slice(0, thirdCall + 2)); // through the third call's TRANSITION
    const app3 = createApp(defineConfig({ stores: fresh, effects: { model: model.effect }, logics: [machine] }));
    const actor3 = await app3.resume("p");
    const read = fresh.events.read.bind(fresh.events);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    fresh.events.read = async (...args) => (await held, read(...args));
    const usage = app3.usage("p");
    await actor3.sendAsync({ type: "GO" });
    await actor3.settled();
    release();
    expect(await usage).toMatchObject({ modelCalls: 4 });
    expect(await app3.usage("p")).toMatchObject({ modelCalls: 4 });
  });

  it("does not let concurrent model steps of one execution overshoot maxModelCalls together", async () => {
    const region = (id: string) => ({
      initial: "calling",
      states: {
        calling: {
          invoke: { src: "model" as const, id, input: { messages: [], tools: [] }, onDone: "ok", onError: "refused" },
        },
        ok: { type: "final" as const },
        refused: { type: "final" as const },
      },
    });
    const machine = setup({ actors: { model: effectActor<ModelRequest, ModelReply>() } }).createMachine({
      id: "fanout",
      type: "parallel",
      states: { a: region("m1"), b: region("m2"), c: region("m3") },
    });
    const model = countingModel();
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { model: model.effect },
        capabilities: { quotas: { maxModelCalls: 2 } },
      }),
    );
    await app.start(machine, { executionId: "f" });
    await app.result("f");
    expect(model.requests).toHaveLength(2);
    expect(await recordsOf(app, "f", STEP_COMPLETED)).toHaveLength(2);
    expect(await recordsOf(app, "f", STEP_FAILED)).toMatchObject([{ error: { name: "QuotaExceededError" } }]);
  });

  it("applies to model calls only", async () => {
    let searches = 0;
    const machine = setup({ types: {} as { context: { n: number } }, actors: { search: effectActor() } }).createMachine(
      {
        id: "searcher",
        context: { n: 0 },
        initial: "s",
        states: {
          s: {
            invoke: {
              src: "search",
              id: "search",
              onDone: { target: "t", actions: assign({ n: ({ context }) => context.n + 1 }) },
            },
          },
          t: { always: [{ guard: ({ context }) => context.n < 3, target: "s" }, { target: "done" }] },
          done: { type: "final" },
        },
      },
    );
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { search: createToolEffect(async () => ++searches) },
        capabilities: { quotas: { maxModelCalls: 1, maxTokens: 1 } },
      }),
    );
    await app.start(machine, { executionId: "x" });
    await app.result("x");
    expect(searches).toBe(3);
  });

  it("is a typed, exported error that names the quota and the fix", () => {
    const error = new QuotaExceededError("run-1", "maxModelCalls", 5, 5);
    expect(error).toMatchObject({
      name: "QuotaExceededError",
      code: "LOOM_QUOTA_EXCEEDED",
      executionId: "run-1",
      quota: "maxModelCalls",
      limit: 5,
      used: 5,
    });
    expect(error.message).toMatch(/capabilities\.quotas\.maxModelCalls.*Raise the quota/);
  });
});
