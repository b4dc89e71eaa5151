// What a browser app bundles from loomwork/indexeddb: Dexie only when the live catalogue view is used
// (ADR 0007). Exact module lists from esbuild's metafile, not sizes that drift with every change.
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { describe, expect, it } from "vitest";
import { esbuildSize, viteSize } from "../../bench/bundle.js";
// The minimal app's modules themselves, not the package entry: index.ts re-exports the maintenance
// machines, whose evaluation registers them in INTERNAL_MACHINES, the sign that first-use code loaded.
import { createApp } from "../../actors/app.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { defineConfig } from "../../actors/config.js";
import { indexedDbStores } from "../../adapters/indexeddb/index.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { INTERNAL_MACHINES } from "../../machines/helpers/maintenanceIds.js";

const MINIMAL_APP = new URL("../../bench/bundle/minimalApp.ts", import.meta.url).pathname;

const dexieModules = (modules: { module: string }[]) => modules.filter((m) => m.module.startsWith("dexie/"));

describe("the browser bundle of loomwork/indexeddb", () => {
  it("leaves Dexie out of an app that never imports the live catalogue view", async () => {
    const { modules } = await esbuildSize(new URL("../../bench/bundle/minimalApp.ts", import.meta.url).pathname);
    expect(dexieModules(modules)).toEqual([]);
    expect(modules.map((m) => m.module)).not.toContain("adapters/indexeddb/catalogue.ts");
    // The journal and idb are in it: the app does run on IndexedDB.
    expect(modules.map((m) => m.module)).toEqual(expect.arrayContaining(["adapters/indexeddb/eventStore.ts", "idb/build/index.js"]));
  }, 60_000);

  it("loads the paths a minimal app never takes on first use, not at start", async () => {
    const { modules, lazy } = await esbuildSize(new URL("../../bench/bundle/minimalApp.ts", import.meta.url).pathname);
    const atStart = modules.map((m) => m.module);
    for (const module of [
      "actors/lifecycle/erase.ts", "actors/lifecycle/sweep.ts", "actors/lifecycle/export.ts", "actors/lifecycle/internalEffects.ts", "actors/journal/replayCheck.ts", "actors/journal/migrate.ts",
      "actors/lifecycle/erasureStatus.ts", "actors/fleet/submit.ts", "actors/effects/claimCheckPreset.ts", "actors/journal/unfinished.ts",
      "actors/journal/sealing.ts", "stores/recordSealing.ts", "actors/agents/streamBuffer.ts", "actors/agents/uiMessageStream.ts",
    ]) {
      expect(atStart).not.toContain(module);
    }
    // They are still bundled, in chunks of their own that app.sweep() & co. import.
    expect(lazy.chunks).toBeGreaterThan(0);
    expect(lazy.minified).toBeGreaterThan(0);
  }, 60_000);

  it("brings Dexie in with watchExecutions", async () => {
    const { modules } = await esbuildSize(new URL("../../bench/bundle/liveViewApp.ts", import.meta.url).pathname);
    expect(dexieModules(modules).length).toBeGreaterThan(0);
  }, 60_000);

  it("with Vite, leaves the maintenance machines, record sealing, the claim-check and the content walker to the lazy chunk too", async () => {
    const { lazyModules } = await viteSize(MINIMAL_APP);
    // esbuild keeps these in its start chunks because the package entry re-exports them (bench/bundle.ts).
    for (const module of [
      "machines/sweep.ts", "machines/eraseCoordinator.ts", "actors/journal/sealing.ts", "stores/recordSealing.ts", "actors/effects/claimCheck.ts", "actors/lifecycle/citations.ts", "actors/lifecycle/erasureStatus.ts",
      "actors/lifecycle/errors.ts", "stores/sealingErrors.ts", "actors/effects/ringLayers.ts", "actors/effects/retry.ts", "actors/agents/retryableErrors.ts", "actors/agents/streamBuffer.ts",
    ]) {
      expect(lazyModules).toContain(module);
    }
    expect(lazyModules).not.toContain("actors/journal/execution.ts");
  }, 120_000);
});

describe("the minimal agent app's run", () => {
  it("run from its esbuild bundle (in a fresh Node over fake-indexeddb), loads its start chunks and no lazy one", async () => {
    const { lazyLoadedByRun, lazy } = await esbuildSize(MINIMAL_APP, { run: true });
    expect(lazy.chunks).toBeGreaterThan(0);
    expect(lazyLoadedByRun).toEqual([]);
  }, 60_000);

  it("loads no first-use code: the lazy chunks it never fetches are rightly left out of its size", async () => {
    const stores = await indexedDbStores({ name: "minimal-app", indexedDB: new IDBFactory(), IDBKeyRange });
    const loop = agentLoop$({ id: "minimal", model: "model" });
    const app = createApp(defineConfig({ stores, effects: { model: createLlmEffect(scriptedModel([{ text: "Hello." }])) } }));
    await app.start(loop, { executionId: "run-1", input: { prompt: "Say hello." } });
    expect(await app.result("run-1")).toMatchObject({ text: "Hello." });
    expect(INTERNAL_MACHINES.size).toBe(0);
    // A first-use path does load it (actors/lifecycle/onFirstUse.ts), so the check above can fail.
    expect((await app.checkReplay(loop)).ok).toBe(true);
    expect([...INTERNAL_MACHINES.keys()].sort()).toEqual(["loom.eraseCoordinator", "loom.sweep"]);
    await app.close();
  }, 60_000);
});
