// EffectContext: what every effect and middleware knows about the call, and taskKind from how it was invoked.
import { describe, expect, it } from "vitest";
import { setup } from "xstate";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { realClock } from "../../actors/clock.js";
import { clockOf } from "../../actors/effects/retryOptions.js";
import { declarationOf } from "../../actors/logicDeclaration.js";
import { createBus } from "../../actors/bus.js";
import { EffectRuntime } from "../../actors/effects/runtime.js";
import { createTaskEffect, createToolEffect, type EffectContext } from "../../actors/effects/effect.js";
import { effectActor, stepInput } from "../../machines/helpers/effectActor.js";
import { invokeAs, invokedAs, taskKindOf } from "../../machines/helpers/invokeAs.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import { countingModel, recordsOf } from "./helpers.js";

describe("EffectContext", () => {
  it("carries executionId, stepId, effectId, taskKind, subject, attempt, idempotencyKey and signal", async () => {
    const seen: EffectContext[] = [];
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { search: createToolEffect(async (_input: unknown, ctx) => (seen.push(ctx), "hit")) },
      }),
    );
    const machine = setup({ actors: { search: effectActor() } }).createMachine({
      id: "ctx",
      initial: "a",
      states: { a: { invoke: { src: "search", id: "search", onDone: "b" } }, b: { type: "final" } },
    });
    await app.start(machine, { executionId: "run-7", subject: "user-3" });
    await app.result("run-7");
    const [ctx] = seen;
    expect(ctx).toMatchObject({
      executionId: "run-7",
      stepId: "ctx#search:1",
      effectId: "search",
      taskKind: "tool",
      subject: "user-3",
      attempt: 1,
      idempotencyKey: "run-7/ctx#search:1",
    });
    expect(ctx!.signal).toBeInstanceOf(AbortSignal);
    // Nothing of the context is journaled beside the step id and effect id.
    expect(Object.keys((await recordsOf(app, "run-7", STEP_COMPLETED))[0]!).sort()).toEqual([
      "at",
      "effectId",
      "output",
      "seq",
      "stepId",
      "type",
    ]);
  });

  it("sets taskKind from how the machine invoked the effect (invokeAs), else from the effect's kind", async () => {
    const kinds: Record<string, string> = {};
    const record = (name: string) => (_input: unknown, ctx: EffectContext) => (
      (kinds[`${name}@${ctx.stepId}`] = ctx.taskKind),
      "ok"
    );
    const model = countingModel();
    const machine = setup({
      actors: { chore: effectActor(), helper: effectActor(), model: effectActor() },
    }).createMachine({
      id: "kinds",
      initial: "a",
      states: {
        a: { invoke: { src: "chore", id: "chore", onDone: "b" } },
        b: { invoke: { src: "helper", id: "helper", input: invokeAs("tool", "turn:0:tool:0", { q: 1 }), onDone: "c" } },
        c: {
          invoke: {
            src: "model",
            id: "model",
            input: invokeAs("tool", "turn:0:tool:1", { messages: [], tools: [] }),
            onDone: "d",
          },
        },
        d: { type: "final" },
      },
    });
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          chore: createTaskEffect(record("chore")),
          helper: createTaskEffect(record("helper")),
          model: { ...model.effect, run: (input, ctx) => (record("model")(input, ctx), model.effect.run(input, ctx)) },
        },
      }),
    );
    await app.start(machine, { executionId: "k" });
    await app.result("k");
    expect(kinds).toEqual({
      "chore@kinds#chore:1": "task",
      "helper@kinds#turn:0:tool:0": "tool",
      "model@kinds#turn:0:tool:1": "tool",
    });
    // An llm effect invoked as a tool frame is still a model call: the ring meters it by the effect's kind.
    expect(await app.usage("k")).toMatchObject({ modelCalls: 1 });
  });

  it("keeps the declared role apart from the kind: invokedAs(ctx) is the invokeAs role, undefined for a plain invoke", async () => {
    const roles: Record<string, unknown> = {};
    const record = (_input: unknown, ctx: EffectContext) => (
      (roles[ctx.stepId] = [ctx.taskKind, invokedAs(ctx)]),
      "ok"
    );
    const machine = setup({ actors: { lookup: effectActor() } }).createMachine({
      id: "roles",
      initial: "a",
      states: {
        a: { invoke: { src: "lookup", id: "plain", input: stepInput("turn:0:tool:0", {}), onDone: "b" } },
        b: { invoke: { src: "lookup", id: "framed", input: invokeAs("tool", "turn:0:tool:1", {}), onDone: "c" } },
        c: { type: "final" },
      },
    });
    const app = createApp(defineConfig({ stores: memoryStores(), effects: { lookup: createToolEffect(record) } }));
    await app.start(machine, { executionId: "roles" });
    await app.result("roles");
    expect(roles).toEqual({ "roles#turn:0:tool:0": ["tool", undefined], "roles#turn:0:tool:1": ["tool", "tool"] });
  });

  it("keeps the role out of the effect's input", () => {
    const wrapped = invokeAs("tool", "turn:1:tool:0", { q: "x" });
    expect(taskKindOf(wrapped)).toBe("tool");
    expect(taskKindOf({ q: "x" })).toBeUndefined();
    expect(wrapped.input).toEqual({ q: "x" });
  });

  it("types what an effect may read: the app's clock, the delta sink and the effects lookup ride on the context as fields", async () => {
    const seen: EffectContext[] = [];
    const clock = { now: () => 42, setTimer: realClock.setTimer };
    const search = createToolEffect(async (_input: unknown, ctx) => (seen.push(ctx), "hit"), { description: "Search" });
    const app = createApp(defineConfig({ stores: memoryStores(), clock, effects: { search } }));
    const machine = setup({ actors: { search: effectActor() } }).createMachine({
      id: "typed",
      initial: "a",
      states: { a: { invoke: { src: "search", id: "s", input: {}, onDone: "b" } }, b: { type: "final" } },
    });
    await app.start(machine, { executionId: "t" });
    await app.result("t");
    const ctx = seen[0]!;
    expect(ctx.clock).toBe(clock);
    expect(clockOf(ctx).now()).toBe(42);
    expect(typeof ctx.emitDelta).toBe("function");
    expect(ctx.effectOf?.("search")).toBe(search);
    expect(Object.getOwnPropertySymbols(ctx)).toEqual([]);
    expect(clockOf({ ...ctx, clock: undefined })).toBe(realClock);
    await app.close();
  });

  it("asks a logic's declaration for the role of a step journaled without one: agentLoop$ answers for its own tool frames only", () => {
    const declared = declarationOf(agentLoop$({ id: "legacy", model: "model" }));
    expect(declared?.roleOfUndeclaredStep?.("legacy#turn:2:tool:0")).toBe("tool");
    expect(declared?.roleOfUndeclaredStep?.("legacy#turn:2:model")).toBeUndefined();
    expect(declared?.roleOfUndeclaredStep?.("other#turn:2:tool:0")).toBeUndefined();
    expect(declarationOf(setup({}).createMachine({ id: "plain" }))).toBeUndefined();
  });

  it("runs a step restored without a role in the role its logic declares (an agentLoop$ tool frame journaled before invokeAs)", async () => {
    const roles: [string, string | undefined][] = [];
    const lookup = createTaskEffect(async (_input: unknown, ctx) => (roles.push([ctx.taskKind, ctx.invokedAs]), "ok"));
    const runtime = new EffectRuntime(defineConfig({ stores: memoryStores(), effects: { lookup } }), createBus());
    const call = (logic: Parameters<typeof declarationOf>[0], stepId: string) =>
      runtime.run({
        executionId: "old",
        logic,
        pending: { childId: "tool:0:0", stepId, effectId: "lookup", input: {} },
        signal: new AbortController().signal,
        appendControl: async () => 0,
      });
    await call(agentLoop$({ id: "legacy", model: "model", tools: ["lookup"] }), "legacy#turn:0:tool:0");
    await call(setup({}).createMachine({ id: "legacy" }), "legacy#turn:0:tool:0");
    expect(roles).toEqual([
      ["tool", "tool"],
      ["task", undefined],
    ]);
  });
});
