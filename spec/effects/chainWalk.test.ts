// The effectChain machine as the runtime walks it (input { live: true }): every layer takes every ending,
// so every live step ends in one of the machine's final states, named by the machine itself.
import { describe, expect, it } from "vitest";
import { initialTransition, transition } from "xstate";
import { createApp } from "../../actors/app.js";
import type { RuntimeEvents } from "../../actors/bus.js";
import { defineConfig } from "../../actors/config.js";
import { GrantDeniedError } from "../../actors/effects/ringLayers.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { ChainTrace } from "../../actors/effects/trace.js";
import {
  CHAIN_LAYERS,
  CHAIN_OUTCOMES,
  effectChain,
  type ChainLayer,
  type EffectChainEvent,
} from "../../machines/effectChain.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_FAILED } from "../../stores/schema.js";
import { oneStep } from "./helpers.js";

const ENDINGS: EffectChainEvent[] = [
  { type: "RESOLVE" },
  { type: "STOP" },
  { type: "REFUSE" },
  { type: "TIMEOUT" },
  { type: "FAIL" },
];

/** The machine's snapshot in `layer`, reached by PASS from its first state. */
function inLayer(layer: ChainLayer, input?: { live: boolean }) {
  let [snapshot] = initialTransition(effectChain, input);
  for (let i = 0; i < CHAIN_LAYERS.indexOf(layer); i++)
    [snapshot] = transition(effectChain, snapshot, { type: "PASS" });
  expect(snapshot.value).toBe(layer);
  return snapshot;
}

describe("a live walk of the effectChain machine", () => {
  describe.each(CHAIN_LAYERS.map((layer) => ({ layer })))("in $layer", ({ layer }) => {
    it.each(ENDINGS.map((event) => ({ event })))(
      "ends in an outcome on $event.type, stopped at the layer unless it completed",
      ({ event }) => {
        const declared = inLayer(layer);
        const [live] = transition(effectChain, inLayer(layer, { live: true }), event);
        expect(live.status).toBe("done");
        expect(CHAIN_OUTCOMES).toContain(live.value);
        if (declared.can(event)) {
          // An ending the layer produces itself means on a live walk what the drawn machine says.
          const [drawn] = transition(effectChain, declared, event);
          expect(live.value).toBe(drawn.value);
          expect(live.context.stoppedAt).toBe(drawn.context.stoppedAt);
        } else {
          // Any other: an output completes the step, anything thrown fails it where it was.
          expect(live.value).toBe(event.type === "RESOLVE" ? "completed" : "failed");
        }
        expect(live.context.stoppedAt).toBe(live.value === "completed" ? null : layer);
        expect(live.output).toEqual({ stoppedAt: live.context.stoppedAt });
      },
    );
  });

  it("is what ChainTrace walks: the outcome and stoppedAt come from the machine's final state", () => {
    const trace = new ChainTrace();
    trace.reach("effect");
    expect(trace.finish({ type: "REFUSE" })).toEqual({ outcome: "failed", stoppedAt: "effect" });
    const resolved = new ChainTrace();
    resolved.reach("claimCheck");
    expect(resolved.finish({ type: "RESOLVE" })).toEqual({ outcome: "completed" });
  });

  it("fails (not refuses) a step whose effect throws a refusal of its own, at the effect", async () => {
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          act: createToolEffect(async () => {
            throw new GrantDeniedError("nested", "deleteAll", [], "*");
          }),
        },
      }),
    );
    const steps: Parameters<RuntimeEvents["step"]>[0][] = [];
    app.on("step", (event) => steps.push(event));
    await app.start(oneStep("act", { handleError: true }), { executionId: "nested" });
    await app.result("nested");
    expect(steps).toMatchObject([{ ok: false, outcome: "failed", stoppedAt: "effect" }]);
    const failed = (await app.log("nested")).find((r) => r.type === STEP_FAILED);
    expect(failed).toMatchObject({
      stoppedAt: "effect",
      error: { name: "GrantDeniedError", code: "LOOM_GRANT_DENIED" },
    });
    await app.close();
  });
});
