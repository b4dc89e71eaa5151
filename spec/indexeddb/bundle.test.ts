// What a browser app bundles from loomwork/indexeddb: Dexie only when the live catalogue view is used
// (ADR 0007). Exact module lists from esbuild's metafile, not sizes that drift with every change.
import { describe, expect, it } from "vitest";
import { esbuildSize } from "../../bench/bundle.js";

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
    for (const module of ["actors/lifecycle/erase.ts", "actors/lifecycle/sweep.ts", "actors/lifecycle/export.ts", "actors/lifecycle/internalEffects.ts", "actors/journal/replayCheck.ts", "actors/journal/migrate.ts"]) {
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
});
