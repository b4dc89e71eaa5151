// Campaign 9: load. 1,000 agent executions running at once in one app (every one of them parked in
// its tool call until all have started), on fsStores and on IndexedDB (fake-indexeddb). None lost:
// every one ends with its answer, its journal contiguous and complete in the store, the catalogue
// lists them all; memory bounded: the heap is measured before, at its peak, with the finished app, after
// app.close() with the app still referenced (what a long-lived process that keeps its app holds), once
// the app is let go, and after the stores are closed too.
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { afterAll, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { fsStores } from "../../adapters/fs/index.js";
import { indexedDbStores } from "../../adapters/indexeddb/index.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { EXECUTION_ENDED, STEP_COMPLETED } from "../../stores/schema.js";
import type { Stores } from "../../stores/types.js";
import { cases, collectGarbage, contiguous, removeTempDirs, tempDir, timeout } from "./support.js";

afterAll(removeTempDirs);

const COUNT = cases("LOAD_EXECUTIONS", 1_000, 5_000);
const MB = 1024 * 1024;
const loop = agentLoop$({ id: "load", model: "model", tools: ["search"], maxTurns: 3, warnTranscriptBytes: false });

interface Figures {
  adapter: string;
  executions: number;
  ms: number;
  heapBeforeMb: number;
  heapPeakMb: number;
  heapFinishedMb: number;
  /** After app.close(), the app and the stores still referenced. */
  heapClosedMb: number;
  /** What the closed app itself still held: the heap with it referenced minus the heap once it is let go. */
  appAfterCloseBytesPerExecution: number;
  heapAfterCloseMb: number;
  records: number;
}

async function load(adapter: string, open: () => Promise<Stores & { close(): Promise<void> }>): Promise<Figures> {
  await collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  let peak = heapBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
  const t0 = performance.now();
  let stores: (Stores & { close(): Promise<void> }) | undefined = await open();
  let started = 0;
  let releaseAll!: () => void;
  const allStarted = new Promise<void>((resolve) => (releaseAll = resolve));
  const effects = {
    model: createLlmEffect(
      scriptedModel((_request, call) =>
        call === 0 ? { toolCalls: [{ toolName: "search", input: { q: "owls" } }] } : { text: "answer" },
      ),
    ),
    // Every tool call waits until all executions have started: the 1,000 are in flight at once.
    search: createToolEffect(async (_input: unknown, ctx) => {
      await allStarted;
      return { hits: [`${ctx.executionId} hit`] };
    }),
  };
  let app: ReturnType<typeof createApp> | undefined = createApp(
    defineConfig({ stores, effects, logics: [loop], execution: { snapshotEvery: false } }),
  );
  const ids = Array.from({ length: COUNT }, (_, i) => `load-${String(i).padStart(5, "0")}`);
  await Promise.all(
    ids.map(async (id) => {
      await app!.start(loop, { executionId: id, input: { prompt: `question ${id}` } });
      if (++started === ids.length) releaseAll();
    }),
  );
  const results = await Promise.all(ids.map((id) => app!.result(id)));
  const ms = performance.now() - t0;
  for (const result of results) expect(result).toMatchObject({ text: "answer", turns: 2 });

  // None lost: the store itself has every execution, ended, its log complete.
  const listed = await stores.events.listExecutions();
  expect(listed.filter((info) => info.executionId.startsWith("load-") && info.status === "done")).toHaveLength(COUNT);
  let records = 0;
  for (const id of ids) {
    const log = await stores.events.read(id);
    records += log.length;
    expect(contiguous(log), id).toBe(true);
    expect(
      log.filter((r) => r.type === STEP_COMPLETED),
      id,
    ).toHaveLength(3);
    expect(log.at(-1)?.type, id).toBe(EXECUTION_ENDED);
  }
  clearInterval(sampler);
  await collectGarbage();
  const heapFinished = process.memoryUsage().heapUsed;
  await app.close();
  await collectGarbage();
  const heapClosed = process.memoryUsage().heapUsed;
  app = undefined;
  await collectGarbage();
  const heapAppDropped = process.memoryUsage().heapUsed;
  await stores.close();
  stores = undefined;
  await collectGarbage();
  const heapAfterClose = process.memoryUsage().heapUsed;
  const mb = (bytes: number) => Math.round((bytes / MB) * 10) / 10;
  return {
    adapter,
    executions: COUNT,
    ms: Math.round(ms),
    heapBeforeMb: mb(heapBefore),
    heapPeakMb: mb(Math.max(peak, heapFinished)),
    heapFinishedMb: mb(heapFinished),
    heapClosedMb: mb(heapClosed),
    appAfterCloseBytesPerExecution: Math.round((heapClosed - heapAppDropped) / COUNT),
    heapAfterCloseMb: mb(heapAfterClose),
    records,
  };
}

function expectBounded(figures: Figures): void {
  console.info(`[campaign 9] ${JSON.stringify(figures)}`);
  // Bounded: the peak stays well under a small per-execution budget, and closing gives it back.
  expect(figures.heapPeakMb - figures.heapBeforeMb).toBeLessThan(0.5 * figures.executions);
  expect(figures.heapAfterCloseMb - figures.heapBeforeMb).toBeLessThan(32);
  // Closing gives it back although the app is still referenced: under 1 KB per execution it ran (it was
  // 14-18 kB, each finished execution's state, until the app object itself was dropped).
  expect(figures.appAfterCloseBytesPerExecution).toBeLessThan(1024);
}

describe("1,000 executions at once in one app", () => {
  it(
    "on fsStores: none lost, memory bounded",
    async () => {
      const dir = await tempDir("load");
      expectBounded(await load("fs", () => fsStores({ dir })));
    },
    timeout(120_000, 1_800_000),
  );

  it(
    "on IndexedDB (fake-indexeddb): none lost, memory bounded",
    async () => {
      const factory = new IDBFactory();
      expectBounded(await load("indexeddb", () => indexedDbStores({ name: "load", indexedDB: factory, IDBKeyRange })));
    },
    timeout(120_000, 3_600_000),
  );
});
