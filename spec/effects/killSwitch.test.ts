// The kill switch (global and per execution) and cancellation through ctx.signal.
import { describe, expect, it } from "vitest";
import { setup } from "xstate";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { EffectStoppedError } from "../../actors/effects/layers.js";
import { createToolEffect, type EffectContext } from "../../actors/effects/effect.js";
import { ExecutionStoppedError } from "../../actors/errors.js";
import { effectActor } from "../../machines/helpers/effectActor.js";
import { memoryStores } from "../../stores/memory.js";
import { EXECUTION_ENDED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import { until } from "../support/harness.js";
import { oneStep, outcome, recordsOf } from "./helpers.js";

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("the global kill switch", () => {
  it("stops every new step of every execution at the first layer while engaged, and lets them run once released", async () => {
    let runs = 0;
    const app = createApp(
      defineConfig({ stores: memoryStores(), effects: { act: createToolEffect(async () => ++runs) } }),
    );
    expect(app.killSwitch.engaged).toBe(false);
    app.killSwitch.engage("provider incident");
    expect(app.killSwitch).toMatchObject({ engaged: true, reason: "provider incident" });
    await app.start(oneStep("act"), { executionId: "a" });
    await app.start(oneStep("act", { handleError: true }), { executionId: "b" });
    await outcome(app, "a");
    await outcome(app, "b");
    expect(runs).toBe(0);
    for (const id of ["a", "b"]) {
      const [failed] = await recordsOf(app, id, STEP_FAILED);
      expect(failed).toMatchObject({
        stoppedAt: "killSwitch",
        error: { name: "EffectStoppedError", message: expect.stringContaining("provider incident") },
      });
    }
    // Unhandled, the refusal ends the execution visibly; handled, the machine decides.
    expect((await app.log("a")).at(-1)).toMatchObject({
      type: EXECUTION_ENDED,
      status: "error",
      error: { name: "EffectStoppedError" },
    });
    expect(await app.result("b")).toMatchObject({ error: { name: "EffectStoppedError" } });
    await expect(app.invokeTransient("act", {})).rejects.toBeInstanceOf(EffectStoppedError);

    app.killSwitch.release();
    expect(app.killSwitch.engaged).toBe(false);
    await app.start(oneStep("act"), { executionId: "c" });
    await app.result("c");
    expect(runs).toBe(1);
    expect(await recordsOf(app, "c", STEP_COMPLETED)).toHaveLength(1);
  });

  it("lets an effect that is already running finish (engage stops new work; app.stop aborts running work)", async () => {
    const running = gate();
    const release = gate();
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          act: createToolEffect(async () => {
            running.open();
            await release.opened;
            return "finished";
          }),
        },
      }),
    );
    await app.start(oneStep("act"), { executionId: "e" });
    await running.opened;
    app.killSwitch.engage();
    release.open();
    await app.result("e");
    expect(await recordsOf(app, "e", STEP_COMPLETED)).toMatchObject([{ output: "finished" }]);
  });
});

describe("app.stop", () => {
  it("stops a step that has not reached its effect: it enters no inner layer and the execution ends as stopped", async () => {
    const inMiddleware = gate();
    const proceed = gate();
    const reached: string[] = [];
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          act: createToolEffect(async () => {
            reached.push("effect");
            return "ran";
          }),
        },
        execution: {
          effectMiddleware: [
            async (_ctx, input, next) => {
              inMiddleware.open();
              await proceed.opened;
              reached.push("outer calls next");
              return next(input);
            },
            async (_ctx, input, next) => {
              reached.push("inner");
              return next(input);
            },
          ],
        },
      }),
    );
    const stoppedSteps: unknown[] = [];
    app.on("step", (event) => stoppedSteps.push(event));
    await app.start(oneStep("act"), { executionId: "e" });
    await inMiddleware.opened;
    await app.stop("e", "user pressed stop");
    proceed.open();
    await expect(app.result("e")).rejects.toBeInstanceOf(ExecutionStoppedError);
    await until(() => stoppedSteps.length === 1);
    expect(reached).toEqual(["outer calls next"]);
    expect(stoppedSteps[0]).toMatchObject({ ok: false, outcome: "stopped", stoppedAt: "middleware" });
    const log = await app.log("e");
    expect(log.filter((r) => r.type === STEP_COMPLETED || r.type === STEP_FAILED)).toEqual([]);
    expect(log.at(-1)).toMatchObject({
      type: EXECUTION_ENDED,
      status: "stopped",
      error: { message: "user pressed stop" },
    });
  });
});

describe("cancellation through ctx.signal", () => {
  it("aborts a running effect's signal when its execution is stopped", async () => {
    let seen: EffectContext | undefined;
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          act: createToolEffect(
            (_input: unknown, ctx) =>
              new Promise((_resolve, reject) => {
                seen = ctx;
                ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
              }),
          ),
        },
      }),
    );
    await app.start(oneStep("act"), { executionId: "e" });
    await until(() => seen !== undefined);
    expect(seen!.signal.aborted).toBe(false);
    await app.stop("e");
    expect(seen!.signal.aborted).toBe(true);
    expect((await app.log("e")).map((r) => r.type)).not.toContain(STEP_FAILED);
  });

  it("aborts a running effect's signal when the state that invoked it is left, and journals no outcome for it", async () => {
    const machine = setup({ actors: { slow: effectActor() } }).createMachine({
      id: "cancellable",
      initial: "working",
      states: {
        working: { invoke: { src: "slow", id: "slow", onDone: "done" }, on: { CANCEL: "cancelled" } },
        cancelled: { type: "final" },
        done: { type: "final" },
      },
    });
    let signal: AbortSignal | undefined;
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          slow: createToolEffect(
            (_input: unknown, ctx) =>
              new Promise((resolve) => {
                signal = ctx.signal;
                ctx.signal.addEventListener("abort", () => resolve("too late"));
              }),
          ),
        },
      }),
    );
    const actor = await app.start(machine, { executionId: "e" });
    await until(() => signal !== undefined);
    await actor.sendAsync({ type: "CANCEL" });
    expect(signal!.aborted).toBe(true);
    await app.result("e");
    await actor.settled();
    const log = await app.log("e");
    expect(log.filter((r) => r.type === STEP_COMPLETED || r.type === STEP_FAILED)).toEqual([]);
    expect(log.at(-1)).toMatchObject({ type: EXECUTION_ENDED, status: "done" });
  });
});
