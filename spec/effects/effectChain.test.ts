// The effectChain machine: every path xstate/graph enumerates is turned into a real step run through
// the runtime, and the STEP_* record it journals (and its replay in a fresh app) is checked.
import { describe, expect, it } from "vitest";
import { initialTransition, transition } from "xstate";
import { getShortestPaths, getSimplePaths } from "xstate/graph";
import { appInternals, createApp, type App } from "../../actors/app.js";
import type { RuntimeEvents } from "../../actors/bus.js";
import { defineConfig, type LoomConfig } from "../../actors/config.js";
import { createToolEffect, type EffectMiddleware } from "../../actors/effects/effect.js";
import { CHAIN_LAYERS, CHAIN_OUTCOMES, effectChain, type EffectChainEvent } from "../../machines/effectChain.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { Stores } from "../../stores/types.js";
import { countingModel, oneStep } from "./helpers.js";

const EVENTS: EffectChainEvent[] = [
  { type: "PASS" },
  { type: "RESOLVE" },
  { type: "STOP" },
  { type: "REFUSE" },
  { type: "TIMEOUT" },
  { type: "FAIL" },
];
const ERROR_OF: Record<string, string> = {
  STOP: "EffectStoppedError",
  REFUSE: "GrantDeniedError",
  TIMEOUT: "EffectTimeoutError",
};

/** A path to a final state (its first step is xstate.init), as (the layer it ended in, the event that ended it). */
function terminalOf(path: { steps: { event: EffectChainEvent; state: { value: unknown } }[] }): {
  layer: string;
  event: string;
  outcome: string;
} {
  const last = path.steps.at(-1)!;
  return { layer: String(path.steps.at(-2)!.state.value), event: last.event.type, outcome: String(last.state.value) };
}

interface Scenario {
  /** The effect the one-step machine invokes. */
  src: "act" | "model";
  config?: (app: () => App) => Partial<LoomConfig>;
  claimCheck?: (app: () => App) => EffectMiddleware;
  act?: (app: () => App) => (input: unknown) => Promise<unknown>;
  failName?: string;
}

const hang = () => new Promise<never>(() => undefined);

/** One way to make a real step take each path. */
const SCENARIOS: Record<string, Scenario> = {
  "killSwitch/STOP": { src: "act", config: () => ({}) },
  "claimCheck/STOP": {
    src: "act",
    claimCheck: (app) => (_ctx, input, next) => {
      app().killSwitch.engage("engaged while offloading");
      return next(input);
    },
  },
  "claimCheck/FAIL": {
    src: "act",
    claimCheck: () => async () => {
      throw new Error("content store unreachable");
    },
    failName: "Error",
  },
  "capabilities/STOP": {
    src: "model",
    config: (app) => ({
      capabilities: {
        guardRequest: () => {
          app().killSwitch.engage("engaged by the guard");
        },
      },
    }),
  },
  "capabilities/REFUSE": { src: "model", config: () => ({ capabilities: { grants: { "chain-model": [] } } }) },
  "capabilities/FAIL": {
    src: "model",
    config: () => ({ capabilities: { guardRequest: () => 42 as never } }),
    failName: "TypeError",
  },
  "middleware/STOP": {
    src: "act",
    config: (app) => ({
      execution: {
        effectMiddleware: [
          (_ctx, input, next) => {
            app().killSwitch.engage("engaged by a middleware");
            return next(input);
          },
        ],
      },
    }),
  },
  "middleware/RESOLVE": {
    src: "act",
    config: () => ({ execution: { effectMiddleware: [async () => "from the cache"] } }),
  },
  "middleware/TIMEOUT": {
    src: "act",
    config: () => ({ execution: { effectMiddleware: [hang] }, capabilities: { timeoutMs: 20 } }),
  },
  "middleware/FAIL": {
    src: "act",
    config: () => ({
      execution: {
        effectMiddleware: [
          async () => {
            throw new RangeError("validator refused the input");
          },
        ],
      },
    }),
    failName: "RangeError",
  },
  "effect/RESOLVE": { src: "act" },
  "effect/STOP": {
    src: "act",
    config: () => ({ capabilities: { retry: { attempts: 3 } } }),
    act: (app) => async () => {
      app().killSwitch.engage("engaged between attempts");
      throw new Error("first attempt failed");
    },
  },
  "effect/TIMEOUT": { src: "act", config: () => ({ capabilities: { timeoutMs: 20 } }), act: () => hang },
  "effect/FAIL": {
    src: "act",
    act: () => async () => {
      throw new SyntaxError("tool crashed");
    },
    failName: "SyntaxError",
  },
};

async function runScenario(key: string, scenario: Scenario) {
  const stores: Stores = memoryStores();
  const ran: string[] = [];
  // Scenarios reach the app lazily (from inside a layer), after it is created below.
  const get = (): App => app;
  const act = scenario.act?.(get) ?? (async () => "acted");
  const model = countingModel();
  const effects = {
    act: createToolEffect(async (input: unknown) => {
      ran.push("act");
      return act(input);
    }),
    model: {
      ...model.effect,
      run: (input: unknown, ctx: never) => (ran.push("model"), model.effect.run(input as never, ctx)),
    },
  };
  const machine = oneStep(scenario.src, { id: `chain-${scenario.src}`, handleError: true });
  const app = createApp(defineConfig({ stores, effects, ...(scenario.config?.(get) ?? {}) }));
  if (key === "killSwitch/STOP") app.killSwitch.engage("engaged before the run");
  if (scenario.claimCheck) appInternals(app).effects.claimCheck = scenario.claimCheck(get);
  const steps: Parameters<RuntimeEvents["step"]>[0][] = [];
  app.on("step", (event) => steps.push(event));
  await app.start(machine, { executionId: key });
  await app.result(key);
  const log = await app.log(key);
  await app.close();
  return { stores, log, steps, ran, effects, machine };
}

describe("the effectChain machine", () => {
  it("is a pure machine whose states are the layers outside in, then the outcomes", () => {
    expect(Object.keys(effectChain.root.states)).toEqual([...CHAIN_LAYERS, ...CHAIN_OUTCOMES]);
    const [start] = initialTransition(effectChain);
    expect(start.value).toBe("killSwitch");
    const [next] = transition(effectChain, start, { type: "PASS" });
    expect(next.value).toBe("claimCheck");
    // A refusal is only taken where a layer can refuse.
    expect(start.can({ type: "REFUSE" })).toBe(false);
    expect(next.can({ type: "RESOLVE" })).toBe(false);
  });

  it("reaches every outcome (shortest paths)", () => {
    const reached = getShortestPaths(effectChain, { events: EVENTS }).map((p) => String(p.state.value));
    for (const outcome of CHAIN_OUTCOMES) expect(reached).toContain(outcome);
    const completed = getShortestPaths(effectChain, { events: EVENTS, toState: (s) => s.value === "completed" });
    expect(completed.map((p) => p.steps.map((s) => s.event.type))).toEqual([
      ["xstate.init", "PASS", "PASS", "PASS", "PASS", "RESOLVE"],
    ]);
  });

  const paths = getSimplePaths(effectChain, { events: EVENTS }).filter((p) => p.state.status === "done");

  it("has a real scenario for every simple path to an outcome, and no scenario for a path it does not have", () => {
    expect(paths.map((p) => `${terminalOf(p).layer}/${terminalOf(p).event}`).sort()).toEqual(
      Object.keys(SCENARIOS).sort(),
    );
  });

  describe.each(paths.map((p) => ({ ...terminalOf(p), path: p.steps.map((s) => String(s.state.value)) })))(
    "path $layer -> $outcome",
    ({ layer, event, outcome, path }) => {
      it(`journals the step as the path says, and replays it from the log (${path.join(" > ")})`, async () => {
        const key = `${layer}/${event}`;
        const scenario = SCENARIOS[key]!;
        const { stores, log, steps, ran, effects, machine } = await runScenario(key, scenario);

        const reachedEffect = CHAIN_LAYERS.indexOf(layer as never) >= CHAIN_LAYERS.indexOf("effect");
        expect(ran.length > 0, "the effect ran").toBe(reachedEffect);
        expect(steps).toHaveLength(1);
        expect(steps[0]).toMatchObject({ outcome, ok: outcome === "completed" });

        const outcomes = log.filter((r) => r.type === STEP_COMPLETED || r.type === STEP_FAILED);
        expect(outcomes).toHaveLength(1);
        const record = outcomes[0]!;
        if (outcome === "completed") {
          expect(record.type).toBe(STEP_COMPLETED);
          expect(record).not.toHaveProperty("stoppedAt");
          expect(steps[0]!.stoppedAt).toBeUndefined();
        } else {
          expect(record.type).toBe(STEP_FAILED);
          expect(record.stoppedAt).toBe(layer);
          expect(steps[0]!.stoppedAt).toBe(layer);
          expect((record.error as { name: string }).name).toBe(scenario.failName ?? ERROR_OF[event]);
        }
        expect(log.at(-1)).toMatchObject({ type: "loom.execution.ended", status: "done" });

        // Replayed as a journal: a fresh app serves the step from the log and runs nothing.
        ran.length = 0;
        const replayer = createApp(defineConfig({ stores, effects, logics: [machine] }));
        const actor = await replayer.resume(key);
        expect(actor.replay.stepsServedFromLog).toBe(1);
        expect(ran).toEqual([]);
        expect(actor.getSnapshot().value).toBe(outcome === "completed" ? "done" : "failed");
      });
    },
  );
});
