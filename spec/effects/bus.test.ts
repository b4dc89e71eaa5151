// The typed runtime event bus (app.on) and observability.onWarn.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../actors/app.js";
import type { RuntimeEvents, Warning } from "../../actors/bus.js";
import { simulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import { until } from "../support/harness.js";
import { countingModel, modelLoop, oneStep } from "./helpers.js";

afterEach(() => vi.restoreAllMocks());

describe("the runtime event bus", () => {
  it("reports each live step with its outcome, duration on the app clock, usage and where a failed one stopped", async () => {
    const clock = simulatedClock(1_000);
    const model = countingModel({ inputTokens: 3, outputTokens: 4 });
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        clock,
        effects: { model: model.effect, search: createToolEffect(async () => "x") },
        capabilities: { grants: { "one-search": [] } },
      }),
    );
    const steps: Parameters<RuntimeEvents["step"]>[0][] = [];
    const unbind = app.on("step", (event) => steps.push(event));
    await app.start(modelLoop(1), { executionId: "m" });
    await app.result("m");
    await app.start(oneStep("search"), { executionId: "s" });
    await app.result("s").catch(() => undefined);
    expect(steps).toEqual([
      {
        executionId: "m",
        stepId: "looper#turn:0:model",
        effectId: "model",
        ok: true,
        outcome: "completed",
        durationMs: 0,
        usage: { inputTokens: 3, outputTokens: 4 },
      },
      {
        executionId: "s",
        stepId: "one-search#search:1",
        effectId: "search",
        ok: false,
        outcome: "refused",
        durationMs: 0,
        stoppedAt: "capabilities",
      },
    ]);
    unbind();
    await app.start(oneStep("model", { id: "again" }), { executionId: "after", input: { messages: [], tools: [] } });
    await app.result("after");
    expect(steps).toHaveLength(2);
  });

  it("emits append after the write and ended for every way an execution ends", async () => {
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          search: createToolEffect(async () => "x"),
          hang: createToolEffect(() => new Promise<never>(() => undefined)),
        },
      }),
    );
    const appended: string[][] = [];
    const ended: { executionId: string; status: string }[] = [];
    app.on("append", ({ executionId, records }) => appended.push([executionId, ...records.map((r) => r.type)]));
    app.on("ended", (event) => ended.push(event));
    await app.start(oneStep("search"), { executionId: "done" });
    await app.result("done");
    app.killSwitch.engage();
    await app.start(oneStep("search"), { executionId: "error" });
    await app.result("error").catch(() => undefined);
    app.killSwitch.release();
    await app.start(oneStep("hang"), { executionId: "stopped" });
    await app.stop("stopped");
    expect(ended).toEqual([
      { executionId: "done", status: "done" },
      { executionId: "error", status: "error" },
      { executionId: "stopped", status: "stopped" },
    ]);
    expect(appended[1]).toEqual(["done", STEP_COMPLETED, "loom.transition", "loom.execution.ended"]);
  });
});

describe("a throwing listener", () => {
  it("never fails a run: it becomes a warning, and the other listeners still run", async () => {
    const emitted = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    const warnings: Warning[] = [];
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { search: createToolEffect(async () => "x") },
        observability: { onWarn: (w) => warnings.push(w) },
      }),
    );
    const marker = `warn listener broke ${Math.random()}`;
    app.on("append", () => {
      throw new Error("append listener broke");
    });
    app.on("step", () => {
      throw new Error("step listener broke");
    });
    app.on("warn", () => {
      throw new Error(marker);
    });
    const seen: string[] = [];
    app.on("append", ({ records }) => seen.push(...records.map((r) => r.type)));
    await app.start(oneStep("search"), { executionId: "l" });
    expect(await app.result("l")).toEqual({ error: null });
    expect(seen).toContain("loom.execution.ended");
    expect(warnings.map((w) => w.code)).toContain("LOOM_LISTENER_FAILED");
    expect(warnings.map((w) => w.message)).toEqual(
      expect.arrayContaining([expect.stringContaining('app.on("step") listener threw: step listener broke')]),
    );
    expect(emitted.mock.calls.filter(([m]) => String(m).includes(marker))).toHaveLength(1);
    expect((await app.log("l")).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe("observability.onWarn", () => {
  it("receives warnings; a throwing sink never fails the run and is reported once through the process warning channel", async () => {
    const emitted = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    const received: Warning[] = [];
    const marker = `sink exploded ${Math.random()}`;
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { search: createToolEffect(async () => "x") },
        observability: {
          onWarn: (warning) => {
            received.push(warning);
            throw new Error(marker);
          },
        },
      }),
    );
    const onBus: Warning[] = [];
    app.on("warn", (warning) => onBus.push(warning));
    const actor = await app.start(oneStep("search"), { executionId: "w" });
    // A throwing subscriber is a warning, never a failure.
    actor.subscribe(() => {
      throw new Error("subscriber bug");
    });
    await app.result("w");
    await until(() => received.length >= 1);
    // A second warning: onWarn throws again, and the process is told once.
    const second = await app.start(oneStep("search"), { executionId: "w2" });
    second.subscribe(() => {
      throw new Error("another subscriber bug");
    });
    await app.result("w2");
    await until(() => received.length >= 2);
    expect(received.map((w) => w.code)).toEqual(["LOOM_SUBSCRIBER", "LOOM_SUBSCRIBER"]);
    expect(onBus.map((w) => w.code)).toEqual(["LOOM_SUBSCRIBER", "LOOM_SUBSCRIBER"]);
    const reports = emitted.mock.calls.filter(([message]) => String(message).includes(marker));
    expect(reports).toHaveLength(1);
    expect(reports[0]![0]).toBe(`onWarn threw while reporting LOOM_SUBSCRIBER: ${marker}`);
    expect((await app.log("w")).at(-1)).toMatchObject({ status: "done" });
  });
});
