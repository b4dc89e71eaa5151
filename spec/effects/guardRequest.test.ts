// capabilities.guardRequest: sees every model request first; may rewrite it or veto it.
import { describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { GuardRefusedError } from "../../actors/effects/ringLayers.js";
import { defineConfig, type LoomConfig } from "../../actors/config.js";
import { createToolEffect, type EffectContext } from "../../actors/effects/effect.js";
import type { ModelRequest } from "../../machines/helpers/messages.js";
import { memoryStores } from "../../stores/memory.js";
import { EXECUTION_ENDED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import { countingModel, modelLoop, oneStep, recordsOf } from "./helpers.js";

function guardedApp(guardRequest: NonNullable<LoomConfig["capabilities"]>["guardRequest"]) {
  const model = countingModel();
  let searches = 0;
  const app = createApp(
    defineConfig({
      stores: memoryStores(),
      effects: { model: model.effect, search: createToolEffect(async () => ++searches) },
      capabilities: { guardRequest },
    }),
  );
  return { app, model, searches: () => searches };
}

describe("guardRequest", () => {
  it("may rewrite a model request: the model receives the rewritten one", async () => {
    const seen: EffectContext[] = [];
    const { app, model } = guardedApp((request, ctx) => {
      seen.push(ctx);
      return { ...request, messages: [{ role: "system", content: "Never reveal keys." }, ...request.messages] };
    });
    await app.start(modelLoop(1), { executionId: "r" });
    await app.result("r");
    expect(model.requests[0]!.messages).toEqual([
      { role: "system", content: "Never reveal keys." },
      { role: "user", content: "turn 0" },
    ]);
    expect(seen[0]).toMatchObject({
      executionId: "r",
      stepId: "looper#turn:0:model",
      effectId: "model",
      taskKind: "llm",
    });
  });

  it("sends the request unchanged when it returns nothing", async () => {
    const { app, model } = guardedApp(async () => undefined);
    await app.start(modelLoop(1), { executionId: "n" });
    await app.result("n");
    expect(model.requests[0]!.messages).toEqual([{ role: "user", content: "turn 0" }]);
  });

  it("refuses a vetoed request with GuardRefusedError: the model is not called and the execution ends with it", async () => {
    const { app, model } = guardedApp((request: ModelRequest) =>
      JSON.stringify(request).includes("turn 0") ? { veto: "turn 0 is off limits" } : undefined,
    );
    await app.start(modelLoop(2), { executionId: "v" });
    await expect(app.result("v")).rejects.toMatchObject({
      error: { name: "GuardRefusedError", reason: "turn 0 is off limits" },
    });
    expect(model.requests).toEqual([]);
    const log = await app.log("v");
    expect(log.filter((r) => r.type === STEP_COMPLETED)).toEqual([]);
    expect(log.find((r) => r.type === STEP_FAILED)).toMatchObject({
      stoppedAt: "capabilities",
      error: { code: "LOOM_GUARD_REFUSED" },
    });
    expect(log.at(-1)).toMatchObject({ type: EXECUTION_ENDED, status: "error", error: { name: "GuardRefusedError" } });
  });

  it("turns a throwing guard into GuardRefusedError carrying its message", async () => {
    const { app, model } = guardedApp(() => {
      throw new Error("PII detected");
    });
    await app.start(modelLoop(1, { handleError: true }), { executionId: "t" });
    expect(await app.result("t")).toMatchObject({
      error: { name: "GuardRefusedError", message: expect.stringContaining("PII detected") },
    });
    expect(model.requests).toEqual([]);
  });

  it("guards model calls only, and transient model calls too", async () => {
    const guarded: string[] = [];
    const { app, model, searches } = guardedApp((_request, ctx) => {
      guarded.push(ctx.effectId);
      return { veto: "no" };
    });
    await app.start(oneStep("search"), { executionId: "s" });
    await app.result("s");
    expect(searches()).toBe(1);
    expect(guarded).toEqual([]);
    await expect(app.invokeTransient("model", { messages: [], tools: [] })).rejects.toBeInstanceOf(GuardRefusedError);
    expect(guarded).toEqual(["model"]);
    expect(model.requests).toEqual([]);
    expect(await recordsOf(app, "s", STEP_FAILED)).toEqual([]);
  });
});
