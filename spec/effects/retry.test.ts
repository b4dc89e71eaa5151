// Retries with backoff and the effect timeout, on the app's (simulated) clock.
import { describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { simulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect, type EffectContext } from "../../actors/effects/effect.js";
import { ConfigError } from "../../actors/errors.js";
import { EffectTimeoutError, retryMiddleware, timeoutMiddleware } from "../../actors/effects/retry.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import { until } from "../support/harness.js";
import { oneStep, outcome, recordsOf } from "./helpers.js";

/** A tool that fails its first `failures` attempts, recording the context of each. */
function flaky(failures: number) {
  const contexts: EffectContext[] = [];
  const effect = createToolEffect(async (_input: unknown, ctx) => {
    contexts.push(ctx);
    if (contexts.length <= failures) throw new Error(`attempt ${contexts.length} failed`);
    return `ok on attempt ${ctx.attempt}`;
  });
  return { effect, contexts };
}

describe("retryMiddleware", () => {
  it("retries with a doubling backoff on the app clock; the effect sees ctx.attempt 1, 2, 3 and one idempotency key", async () => {
    const clock = simulatedClock(0);
    const { effect, contexts } = flaky(2);
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        clock,
        effects: { act: effect },
        execution: { effectMiddleware: [retryMiddleware({ attempts: 3, backoffMs: 100 })] },
      }),
    );
    await app.start(oneStep("act"), { executionId: "r" });
    await until(() => contexts.length === 1 && clock.pendingTimers() === 1);
    clock.advance(99);
    expect(contexts).toHaveLength(1);
    clock.advance(1);
    await until(() => contexts.length === 2 && clock.pendingTimers() === 1);
    clock.advance(199);
    expect(contexts).toHaveLength(2);
    clock.advance(1);
    expect(await app.result("r")).toEqual({ error: null });
    expect(contexts.map((c) => c.attempt)).toEqual([1, 2, 3]);
    expect(new Set(contexts.map((c) => c.idempotencyKey))).toEqual(new Set(["r/one-act#act:1"]));
    expect(await recordsOf(app, "r", STEP_COMPLETED)).toMatchObject([{ output: "ok on attempt 3" }]);
  });

  it("gives up after `attempts` and journals the last error", async () => {
    const { effect, contexts } = flaky(10);
    const app = createApp(
      defineConfig({ stores: memoryStores(), effects: { act: effect }, capabilities: { retry: { attempts: 2 } } }),
    );
    await app.start(oneStep("act"), { executionId: "g" });
    await outcome(app, "g");
    expect(contexts).toHaveLength(2);
    expect(await recordsOf(app, "g", STEP_FAILED)).toMatchObject([
      { stoppedAt: "effect", error: { message: "attempt 2 failed" } },
    ]);
  });

  it("retries only what retryOn accepts, and never a refusal", async () => {
    const { effect, contexts } = flaky(10);
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { act: effect },
        capabilities: { retry: { attempts: 5, retryOn: (error) => !String(error).includes("attempt 2") } },
      }),
    );
    await app.start(oneStep("act"), { executionId: "o" });
    await outcome(app, "o");
    expect(contexts).toHaveLength(2);

    let calls = 0;
    const retry = retryMiddleware({ attempts: 5 });
    const ctx = { attempt: 1, signal: new AbortController().signal } as EffectContext;
    const refusal = Object.assign(new Error("quota"), { code: "LOOM_QUOTA_EXCEEDED" });
    await expect(retry(ctx, null, async () => (calls++, Promise.reject(refusal)))).rejects.toBe(refusal);
    expect(calls).toBe(1);
  });

  it("takes a backoff function and a cap", async () => {
    const waits: number[] = [];
    const clock = { now: () => 0, setTimer: (fn: () => void, ms: number) => (waits.push(ms), fn(), () => undefined) };
    const ctx = { attempt: 1, signal: new AbortController().signal, clock } as unknown as EffectContext;
    let calls = 0;
    const failing = async () => (calls++, Promise.reject(new Error("no")));
    await retryMiddleware({ attempts: 4, backoffMs: (attempt) => attempt * 10 })(ctx, null, failing).catch(
      () => undefined,
    );
    await retryMiddleware({ attempts: 4, backoffMs: 100, maxBackoffMs: 250 })(ctx, null, failing).catch(
      () => undefined,
    );
    expect(waits).toEqual([20, 30, 40, 100, 200, 250]);
    expect(calls).toBe(8);
  });

  it("stops retrying when the execution stops during a backoff", async () => {
    const clock = simulatedClock(0);
    const { effect, contexts } = flaky(10);
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        clock,
        effects: { act: effect },
        capabilities: { retry: { attempts: 5, backoffMs: 1_000 } },
      }),
    );
    await app.start(oneStep("act"), { executionId: "s" });
    await until(() => contexts.length === 1 && clock.pendingTimers() === 1);
    await app.stop("s");
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(10_000);
    expect(contexts).toHaveLength(1);
    expect((await app.log("s")).at(-1)).toMatchObject({ status: "stopped" });
  });

  it("refuses bad options when it is built (at boot), naming the option", () => {
    expect(() => retryMiddleware({ attempts: 0 })).toThrow(ConfigError);
    expect(() => retryMiddleware({ attempts: 2, backoffMs: -1 })).toThrow(/retryMiddleware.backoffMs/);
    expect(() => retryMiddleware({ attempts: 2, tries: 3 } as never)).toThrow(/retryMiddleware.tries": unknown option/);
  });
});

describe("effect timeouts", () => {
  function hanging() {
    const signals: AbortSignal[] = [];
    const effect = createToolEffect((_input: unknown, ctx) => {
      signals.push(ctx.signal);
      return new Promise<never>(() => undefined);
    });
    return { effect, signals };
  }

  it("fails a step that does not settle in capabilities.timeoutMs with EffectTimeoutError, aborting ctx.signal", async () => {
    const clock = simulatedClock(0);
    const { effect, signals } = hanging();
    const app = createApp(
      defineConfig({ stores: memoryStores(), clock, effects: { act: effect }, capabilities: { timeoutMs: 5_000 } }),
    );
    await app.start(oneStep("act"), { executionId: "t" });
    await until(() => signals.length === 1);
    clock.advance(4_999);
    expect(signals[0]!.aborted).toBe(false);
    clock.advance(1);
    await outcome(app, "t");
    expect(signals[0]!.aborted).toBe(true);
    expect(signals[0]!.reason).toBeInstanceOf(EffectTimeoutError);
    expect(await recordsOf(app, "t", STEP_FAILED)).toMatchObject([
      {
        stoppedAt: "effect",
        error: { name: "EffectTimeoutError", code: "LOOM_EFFECT_TIMEOUT", timeoutMs: 5_000, effectId: "act" },
      },
    ]);
  });

  it("takes a timeout per effect, with '*' for the rest", async () => {
    const clock = simulatedClock(0);
    const slow = hanging();
    const other = hanging();
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        clock,
        effects: { slow: slow.effect, other: other.effect },
        capabilities: { timeoutMs: { slow: 100, "*": 1_000 } },
      }),
    );
    await app.start(oneStep("slow"), { executionId: "a" });
    await app.start(oneStep("other"), { executionId: "b" });
    await until(() => slow.signals.length === 1 && other.signals.length === 1);
    clock.advance(100);
    expect([slow.signals[0]!.aborted, other.signals[0]!.aborted]).toEqual([true, false]);
    clock.advance(900);
    expect(other.signals[0]!.aborted).toBe(true);
  });

  it("times each attempt when combined with capabilities.retry", async () => {
    const clock = simulatedClock(0);
    const attempts: number[] = [];
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        clock,
        effects: {
          act: createToolEffect((_input: unknown, ctx) => {
            attempts.push(ctx.attempt);
            return ctx.attempt < 2 ? new Promise<never>(() => undefined) : Promise.resolve("second attempt");
          }),
        },
        capabilities: { retry: { attempts: 2 }, timeoutMs: 50 },
      }),
    );
    await app.start(oneStep("act"), { executionId: "rt" });
    await until(() => attempts.length === 1);
    clock.advance(50);
    await app.result("rt");
    expect(attempts).toEqual([1, 2]);
  });

  it("is exported as timeoutMiddleware for a user's own chain", async () => {
    const ctx = { stepId: "s", effectId: "e", attempt: 1, signal: new AbortController().signal } as EffectContext;
    await expect(
      timeoutMiddleware(() => 5)(ctx, null, () => new Promise<never>(() => undefined)),
    ).rejects.toBeInstanceOf(EffectTimeoutError);
    expect(await timeoutMiddleware(() => undefined)(ctx, null, async () => "untimed")).toBe("untimed");
  });
});
