// ADR 0140 D8 boot refusals, and the internal-effects seam the sweep and the erase coordinator run on.
import { setup } from "xstate";
import { describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { ConfigError, UnknownEffectError } from "../../actors/errors.js";
import { effectActor } from "../../machines/helpers/effectActor.js";
import { SWEEP_EFFECTS } from "../../machines/sweep.js";
import { EncryptingContentStore } from "../../stores/encryptingContentStore.js";
import { memoryStores } from "../../stores/memory.js";
import type { ContentStore } from "../../stores/types.js";
import { rejection, runAgent, world } from "./support.js";
import { eraseSubject, sweep } from "../../lifecycle.js";

const tool = { fetch: createToolEffect(async () => ({ rows: [] })) };
/** The store minus one of its optional methods. */
const without = (store: ContentStore, method: "delete" | "deleteIfUntouchedSince" | "touchClock"): ContentStore =>
  Object.assign(Object.create(Object.getPrototypeOf(store)), store, { [method]: undefined });

describe("ADR 0140 D8: erasure and encryption fail closed, at boot", () => {
  it("D8 (a): security.crypto + execution.claimCheck is refused at boot (TypeError, nothing composed) unless the store has sealsContent: true", () => {
    const stores = memoryStores();
    const boot = (store: ContentStore) => () =>
      createApp(
        defineConfig({
          stores,
          effects: tool,
          execution: { claimCheck: { store, toolIds: ["fetch"] } },
          security: { crypto: { keys: stores.keys } },
        }),
      );
    expect(boot(stores.content)).toThrow(TypeError);
    expect(boot(stores.content)).toThrow(/sealsContent: true.*EncryptingContentStore/);
    expect(boot(new EncryptingContentStore(stores.content, stores.keys))).not.toThrow();
    // Without crypto the plaintext store is accepted (D8 (b) then covers erasure).
    expect(() =>
      createApp(
        defineConfig({
          stores,
          effects: tool,
          execution: { claimCheck: { store: stores.content, toolIds: ["fetch"] } },
        }),
      ),
    ).not.toThrow();
  });

  it("D8 (b): compliance.erase with a claim-check requires a store with delete() (boot refusal)", () => {
    const stores = memoryStores();
    const boot = (store: ContentStore) => () =>
      createApp(
        defineConfig({
          stores,
          effects: tool,
          execution: { claimCheck: { store, toolIds: ["fetch"] } },
          compliance: { erase: true },
        }),
      );
    expect(boot(without(stores.content, "delete"))).toThrow(ConfigError);
    expect(boot(without(stores.content, "delete"))).toThrow(/compliance\.erase.*no delete\(\)/);
    expect(boot(stores.content)).not.toThrow();
    // A store that deletes but lacks the conditional delete boots; erasure refuses it later, before the shred (D12).
    expect(boot(without(stores.content, "deleteIfUntouchedSince"))).not.toThrow();
  });

  it("compliance.erase is a boolean, and eraseSubject(app, subject) without it is refused with a ConfigError naming it", async () => {
    const stores = memoryStores();
    expect(() => createApp(defineConfig({ stores, effects: tool, compliance: { erase: "yes" as never } }))).toThrow(
      /compliance\.erase/,
    );
    const app = createApp(defineConfig({ stores, effects: tool }));
    const error = await rejection(eraseSubject(app, "A"));
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toMatch(/compliance: \{ erase: true \}/);
    expect(await stores.keys.isDestroyed("A")).toBe(false);
  });
});

describe("internal effects: the runtime's own steps, invisible to user config", () => {
  it("a user effect id under the reserved loom. prefix is refused at boot", () => {
    expect(() =>
      createApp(
        defineConfig({ stores: memoryStores(), effects: { "loom.sweep.begin": createToolEffect(async () => 1) } }),
      ),
    ).toThrow(/reserved for the runtime/);
  });

  it("a user machine cannot invoke an internal effect (UnknownEffectError at start)", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: tool }));
    const machine = setup({ actors: { [SWEEP_EFFECTS.begin]: effectActor() } }).createMachine({
      id: "sneaky",
      initial: "a",
      states: { a: { invoke: { src: SWEEP_EFFECTS.begin, id: "b", onDone: "done" } }, done: { type: "final" } },
    });
    expect(await rejection(app.start(machine, { executionId: "s" }))).toBeInstanceOf(UnknownEffectError);
  });

  it("internal steps bypass the effect chain: user middleware never sees them, grants cannot restrict them, the kill switch does not stop them", async () => {
    const seen: string[] = [];
    // Every logic but the agent is granted nothing: an internal step through the ring would be denied.
    const w = world({ extra: { capabilities: { grants: { "agent-fetch": ["model", "fetch"], "*": [] } } } });
    const app = w.app({
      extra: {
        execution: {
          snapshotEvery: 4,
          claimCheck: { store: w.content, toolIds: ["fetch"] },
          effectMiddleware: [
            async (ctx, input, next) => {
              seen.push(ctx.effectId);
              return next(input);
            },
          ],
        },
      },
    });
    await runAgent(app, "a1", "A", ["fetch"]);
    app.killSwitch.engage("incident");
    const result = await sweep(app, { ttlMs: 0 });
    expect(result.sweepId).toBe("loom.sweep:1");
    const erased = await eraseSubject(app, "A");
    expect(erased.shredded).toBe(true);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((id) => !id.startsWith("loom."))).toBe(true);
    // Journaled like any step: STEP_COMPLETED by a deterministic step id.
    const log = await app.log("loom.sweep:1");
    expect(log.filter((r) => r.type === "loom.step.completed").map((r) => r.stepId)).toEqual([
      "loom.sweep#begin",
      "loom.sweep#scan",
      "loom.sweep#reclaim:0",
      "loom.sweep#reclaim:1",
      "loom.sweep#reclaim:2",
      "loom.sweep#reclaim:3",
    ]);
  });
});
