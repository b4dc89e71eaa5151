// What a browser app bundles from loomwork/indexeddb: Dexie only when the live catalogue view is used
// (ADR 0007), and no lazy chunk, since the runtime never import()s its own code (ADR 0010). Exact module
// lists from esbuild's metafile, not sizes that drift with every change (`npm run bench` prints those).
import { describe, expect, it } from "vitest";
import { BUNDLE_GOAL_GZIP, esbuildSize, ROLE_ENTRY_MODULES, viteSize } from "../../bench/bundle.js";

/**
 * The minimal app's esbuild start chunk, gzipped, may not grow past this: the size measured when the role
 * entries were cut out (67,008 B, ADR 0011), rounded up to the next 1,000 B; raised by 1,000 B by issue 33's
 * custom actions, emit, rejections, timers and checkDeterminism (63,906 B before them, 64,739 B after: the
 * start path runs actions live and replays their logs, so none of it can leave it); raised by 6,000 B by issue 33's
 * child executions and live sources (the planner's children, messages and sources, the execution's outbox and the
 * app's tree: 64,739 B before, 68,674 B after; any machine may invoke a machine or a callback actor, so the kernel is
 * on every start path) and issue 35's UI message stream to the AI SDK 7 protocol (64,765 B before it, 66,149 B after:
 * reset-step, approval parts, denied and unknown calls, taint metadata, the park that ends a response; `app.stream`
 * is built by the App, so its UI stream is on the start path), and its toModelOutput projection (+170 B); both
 * together 70,318 B; then 71,274 B with the tree's limits (ChildLimitError), onSnapshot, the inspector's tree and
 * Effect.close; then 72,369 B with one registry per tree (system.get across a tree, DuplicateSystemIdError) and
 * delayed sendTo to children (timers with a receiver); then 73,135 B with app.executions({ root }), the read models'
 * tree and sub-agents as tools in the agent loop (agentTool); then, from 73,922 B measured again: issue 34's
 * handoffs and quotas across a tree (+1,708 B) and its tree as one run (+2,352 B: a decision sent to a lead routed to
 * the sub-agent that waits, app.stream of a lead merging its sub-agents' parts, the UI stream's subagent messages;
 * `app.stream` and `actor.send` are the App's), issue 37's schedule store on IndexedDB and the app's close hook
 * (+365 B; the cron library and the runner stay in loomwork/schedules), and the queue and retention options createApp
 * checks. The goal is BUNDLE_GOAL_GZIP.
 */
const START_BUDGET_GZIP = 80_000;

const MINIMAL_APP = new URL("../../bench/bundle/minimalApp.ts", import.meta.url).pathname;

const dexieModules = (modules: { module: string }[]) => modules.filter((m) => m.module.startsWith("dexie/"));

describe("the browser bundle of loomwork/indexeddb", () => {
  it("leaves Dexie out of an app that never imports the live catalogue view", async () => {
    const { modules } = await esbuildSize(new URL("../../bench/bundle/minimalApp.ts", import.meta.url).pathname);
    expect(dexieModules(modules)).toEqual([]);
    expect(modules.map((m) => m.module)).not.toContain("adapters/indexeddb/catalogue.ts");
    // The journal and idb are in it: the app does run on IndexedDB.
    expect(modules.map((m) => m.module)).toEqual(
      expect.arrayContaining(["adapters/indexeddb/eventStore.ts", "idb/build/index.js"]),
    );
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

describe("the minimal agent app's start (ADR 0011: entry points by role)", () => {
  it("holds none of the role entries' code: loomwork/lifecycle, loomwork/upgrades, loomwork/read-models, loomwork/schedules (croner)", async () => {
    const { modules } = await esbuildSize(MINIMAL_APP);
    expect(
      modules.map((m) => m.module).filter((module) => ROLE_ENTRY_MODULES.some((pattern) => pattern.test(module))),
    ).toEqual([]);
  }, 60_000);

  it(`stays within its budget of ${START_BUDGET_GZIP} B gzipped (esbuild), though above the goal of ${BUNDLE_GOAL_GZIP} B`, async () => {
    const { gzipped, modules } = await esbuildSize(MINIMAL_APP);
    // What the start path holds, largest first: where to look when the budget is exceeded.
    const largest = modules
      .slice(0, 15)
      .map((m) => `${m.module} ${m.bytes} B`)
      .join(", ");
    console.log(
      `minimal app start: ${gzipped} B gzipped (budget ${START_BUDGET_GZIP} B, goal ${BUNDLE_GOAL_GZIP} B); largest modules (minified): ${largest}`,
    );
    expect(gzipped, `the start grew past its budget; largest modules (minified): ${largest}`).toBeLessThanOrEqual(
      START_BUDGET_GZIP,
    );
  }, 60_000);
});

describe("the minimal agent app's run", () => {
  it("run from its esbuild bundle (in a fresh Node over fake-indexeddb), loads its start chunk and nothing else", async () => {
    const { lazyLoadedByRun, chunks } = await esbuildSize(MINIMAL_APP, { run: true });
    expect(lazyLoadedByRun).toEqual([]);
    expect(chunks).toBe(1);
  }, 60_000);
});
