// app.invokeTransient: an effect run outside any journal (never claim-checked, never recorded).
import { describe, expect, it } from "vitest";
import { appInternals, createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { TRANSIENT_EXECUTION_ID } from "../../actors/effects/chain.js";
import { createTaskEffect, createToolEffect, type EffectContext } from "../../actors/effects/effect.js";
import { AppClosedError, UnknownEffectError } from "../../actors/errors.js";
import { memoryStores } from "../../stores/memory.js";
import { countingModel } from "./helpers.js";

function transientApp() {
  const stores = memoryStores();
  const contexts: EffectContext[] = [];
  const middleware: string[] = [];
  const claimChecked: string[] = [];
  const model = countingModel();
  const app = createApp(
    defineConfig({
      stores,
      effects: {
        model: model.effect,
        lookup: createToolEffect(async (input: { key: string }, ctx) => {
          contexts.push(ctx);
          return { key: input.key, secret: "sk-abc123" };
        }),
        chore: createTaskEffect(async (_input: unknown, ctx) => (contexts.push(ctx), "done")),
      },
      execution: { effectMiddleware: [async (ctx, input, next) => (middleware.push(ctx.effectId), next(input))] },
      security: { redact: [/sk-[a-z0-9]+/] },
      capabilities: { grants: { "*": [] }, quotas: { maxModelCalls: 1 } },
    }),
  );
  appInternals(app).effects.claimCheck = async (ctx, input, next) => (claimChecked.push(ctx.stepId), next(input));
  return { app, stores, contexts, middleware, claimChecked, model };
}

describe("invokeTransient", () => {
  it("runs an effect and journals nothing: no execution, no record, no claim-check, no step event", async () => {
    const { app, stores, claimChecked } = transientApp();
    const steps: unknown[] = [];
    app.on("step", (event) => steps.push(event));
    app.on("append", (event) => steps.push(event));
    expect(await app.invokeTransient("lookup", { key: "k1" })).toEqual({ key: "k1", secret: "[REDACTED]" });
    expect(await stores.events.listExecutions()).toEqual([]);
    expect(await stores.events.read(TRANSIENT_EXECUTION_ID)).toEqual([]);
    expect(claimChecked).toEqual([]);
    expect(steps).toEqual([]);
  });

  it("gives the effect a context with taskKind from the effect, attempt 1 and a fresh idempotency key per call", async () => {
    const { app, contexts, middleware } = transientApp();
    const controller = new AbortController();
    await app.invokeTransient("lookup", { key: "a" }, { subject: "user-9", signal: controller.signal });
    await app.invokeTransient("chore", null);
    expect(contexts[0]).toMatchObject({
      executionId: TRANSIENT_EXECUTION_ID,
      effectId: "lookup",
      taskKind: "tool",
      subject: "user-9",
      attempt: 1,
    });
    expect(contexts[0]!.signal.aborted).toBe(false);
    controller.abort();
    expect(contexts[0]!.signal.aborted).toBe(true);
    expect(contexts[1]).toMatchObject({ effectId: "chore", taskKind: "task" });
    expect(contexts[0]!.idempotencyKey).not.toBe(contexts[1]!.idempotencyKey);
    expect(middleware).toEqual(["lookup", "chore"]);
  });

  it("is outside grants and quotas: there is no execution to grant or count", async () => {
    const { app, model } = transientApp();
    await app.invokeTransient("model", { messages: [], tools: [] });
    await app.invokeTransient("model", { messages: [], tools: [] });
    expect(model.requests).toHaveLength(2);
  });

  it("refuses an unknown effect and a closed app", async () => {
    const { app } = transientApp();
    await expect(app.invokeTransient("nope", {})).rejects.toBeInstanceOf(UnknownEffectError);
    await app.close();
    expect(() => app.invokeTransient("lookup", { key: "x" })).toThrow(AppClosedError);
  });
});
