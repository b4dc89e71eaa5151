// What a browser app bundles from loomwork/indexeddb: Dexie only when the live catalogue view is used
// (ADR 0007), and no lazy chunk, since the runtime never import()s its own code (ADR 0010). Exact module
// lists from esbuild's metafile, not sizes that drift with every change (`npm run bench` prints those).
import { describe, expect, it } from "vitest";
import { esbuildSize, viteSize } from "../../bench/bundle.js";

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

  it("has no lazy chunk: nothing is fetched after the page loaded (ADR 0010)", async () => {
    const { lazy } = await esbuildSize(MINIMAL_APP);
    expect(lazy).toEqual({ chunks: 0, minified: 0, gzipped: 0 });
  }, 60_000);

  it("brings Dexie in with watchExecutions", async () => {
    const { modules } = await esbuildSize(new URL("../../bench/bundle/liveViewApp.ts", import.meta.url).pathname);
    expect(dexieModules(modules).length).toBeGreaterThan(0);
  }, 60_000);

  it("with Vite, has no lazy chunk either", async () => {
    const { chunks, lazyModules } = await viteSize(MINIMAL_APP);
    expect(lazyModules).toEqual([]);
    expect(chunks).toBe(1);
  }, 120_000);
});

describe("the minimal agent app's run", () => {
  it("run from its esbuild bundle (in a fresh Node over fake-indexeddb), loads its start chunk and nothing else", async () => {
    const { lazyLoadedByRun, chunks } = await esbuildSize(MINIMAL_APP, { run: true });
    expect(lazyLoadedByRun).toEqual([]);
    expect(chunks).toBe(1);
  }, 60_000);
});
