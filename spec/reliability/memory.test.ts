// Memory: an app releases what it held for an execution once its outcome is settled, and closing gives
// the rest back, although the app object is still referenced (a long-lived desktop process keeps it).
// Measured in fresh `node --expose-gc` processes (bench/child/memory.ts, the same child `npm run bench`
// runs): the heap after a full GC, V8's code space left out, with the app held and once it is let go:
// the difference is the app's share, divided by the executions it ran. (What an app holds whatever it
// ran, some 10-20 kB of its own objects, counts against the bound too.)
import { readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { appInternals, createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { UnknownExecutionError } from "../../actors/errors.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { fsStores } from "../../adapters/fs/index.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { memoryStores } from "../../stores/memory.js";
import type { MemoryReport } from "../../bench/child/memory.js";
import { MEMORY_CHILD_FLAGS } from "../../bench/memory.js";
import { runChild } from "../../bench/spawn.js";
import { cases, removeTempDirs, tempDir, timeout } from "./support.js";

const EXECUTIONS = cases("MEMORY_EXECUTIONS", 150, 1_000);
const TURNS = 30;
const SETTLED_CACHE = 16;
/** Children measured; each figure is their median. */
const CHILDREN = 3;
/** The bound per finished execution (issue 13: under 1 KB after close, and bounded while open by the cache). */
const BYTES_PER_EXECUTION = 1024;

describe("memory: an app keeps no per-execution state once an outcome is settled", () => {
  it(
    `retains under ${BYTES_PER_EXECUTION} bytes per finished ${TURNS}-turn execution after close (app still referenced), and while open beyond execution.settledCache`,
    async () => {
      const args = { executions: EXECUTIONS, turns: TURNS, warmup: 10, concurrency: 8, settledCache: SETTLED_CACHE };
      // Three children, each figure their median (as the bench's memory row): one child's heap moves by up
      // to some 200 kB between identical runs (GC timing), which over 150 executions is 1 kB each.
      const reports: MemoryReport[] = [];
      for (let i = 0; i < CHILDREN; i++)
        reports.push((await runChild("memory", args, MEMORY_CHILD_FLAGS)) as unknown as MemoryReport);
      const median = (of: (r: MemoryReport) => number) =>
        reports.map(of).sort((a, b) => a - b)[Math.floor(reports.length / 2)] ?? NaN;
      const figures = {
        executions: EXECUTIONS,
        turns: TURNS,
        settledCache: SETTLED_CACHE,
        appShareOpenBytes: median((r) => r.open - r.appDropped),
        appShareClosedBytes: median((r) => r.closed - r.appDropped),
        perExecutionOpenBytes: Math.round(median((r) => r.open - r.appDropped) / EXECUTIONS),
        perExecutionClosedBytes: Math.round(median((r) => r.closed - r.appDropped) / EXECUTIONS),
        wholeHeapPerExecutionBytes: Math.round(median((r) => r.storesClosed - r.before) / EXECUTIONS),
        eachChildClosedBytes: reports.map((r) => r.closed - r.appDropped),
      };
      console.info(`[memory] ${JSON.stringify(figures)}`);
      expect(figures.perExecutionClosedBytes).toBeLessThan(BYTES_PER_EXECUTION);
      expect(figures.perExecutionOpenBytes).toBeLessThan(BYTES_PER_EXECUTION);
      // The whole process (app, the fs stores' own catalogue, everything) stays within a few kB per run.
      expect(figures.wholeHeapPerExecutionBytes).toBeLessThan(8 * BYTES_PER_EXECUTION);
      // app.result keeps working: the first run is long evicted from the cache, the last is in it; after
      // close both come from the journal.
      const expected = { text: `Done after ${TURNS} turns.`, turns: TURNS };
      for (const r of reports)
        for (const result of [...r.openResults, ...r.closedResults]) expect(result).toMatchObject(expected);
    },
    timeout(120_000, 1_200_000),
  );
});

describe("memory: execution.settledCache", () => {
  const loop = agentLoop$({ id: "settled", model: "model", tools: [], maxTurns: 1, warnTranscriptBytes: false });
  const effects = {
    model: createLlmEffect(
      scriptedModel((request) => ({ text: `answer to ${JSON.stringify(request.messages.at(-1)?.content)}` })),
    ),
  };

  it("refuses a settledCache that is not a non-negative integer, naming the option", () => {
    for (const settledCache of [-1, 1.5, Number.NaN, "8"]) {
      expect(
        () =>
          createApp(
            defineConfig({ stores: memoryStores(), effects, execution: { settledCache: settledCache as number } }),
          ),
        String(settledCache),
      ).toThrow(expect.objectContaining({ name: "ConfigError", path: "execution.settledCache" }) as Error);
    }
  });

  it("answers app.result, stop and resume of ended executions past the cache (and with none) from the journal", async () => {
    for (const settledCache of [0, 2]) {
      const app = createApp(
        defineConfig({ stores: memoryStores(), effects, logics: [loop], execution: { settledCache } }),
      );
      const ids = ["a", "b", "c", "d"];
      for (const id of ids) {
        await app.start(loop, { executionId: id, input: { prompt: id } });
        await app.result(id);
      }
      for (const id of ids) {
        expect(await app.result(id), `cache ${settledCache}: ${id}`).toMatchObject({ text: `answer to "${id}"` });
        await expect(app.stop(id), `cache ${settledCache}: stopping ended ${id} is a no-op`).resolves.toBeUndefined();
        expect((await app.resume(id)).getSnapshot().status, `cache ${settledCache}: ${id}`).toBe("done");
        expect(await app.result(id)).toMatchObject({ text: `answer to "${id}"` });
      }
      expect(appInternals(app).execution("a"), "an ended execution is not held").toBeUndefined();
      await expect(app.stop("never")).rejects.toBeInstanceOf(UnknownExecutionError);
      await app.close();
      expect(await app.result("d"), "after close, from the journal").toMatchObject({ text: `answer to "d"` });
    }
  });
});

describe("memory: the fs store holds no open file per finished execution", () => {
  it("closes an ended execution's log handle once its last write is durable, and reopens it for a later append", async () => {
    const dir = await tempDir("fds");
    const openFds = async () => (await readdir("/proc/self/fd")).length;
    const stores = await fsStores({ dir });
    const loop = agentLoop$({ id: "fd", model: "model", warnTranscriptBytes: false });
    const model = scriptedModel(() => ({ text: "done" }));
    const app = createApp(defineConfig({ stores, effects: { model: createLlmEffect(model) } }));
    const before = await openFds();
    for (let i = 0; i < 40; i++) {
      await app.start(loop, { executionId: `r${i}`, input: { prompt: "go" } });
      await app.result(`r${i}`);
    }
    // Each finished run left no descriptor behind (a little slack for the runtime's own).
    expect(await openFds()).toBeLessThanOrEqual(before + 2);
    // A later append to an ended log (erasure's control records do this) reopens it.
    const head = await stores.events.head("r0");
    await stores.events.append("r0", head, [{ seq: head + 1, at: 0, type: "loom.erasure.intent", subject: "s" }]);
    expect(await stores.events.head("r0")).toBe(head + 1);
    await app.close();
    await stores.close();
    const reopened = await fsStores({ dir });
    expect((await reopened.events.read("r0")).at(-1)).toMatchObject({ seq: head + 1, type: "loom.erasure.intent" });
    await reopened.close();
    await removeTempDirs();
  });
});
