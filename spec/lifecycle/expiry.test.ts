// Retention (issue 37): applyRetention(app) removes the ended executions past their period as a journaled
// `loom.retention:<n>` execution. Kept as a summary: a two-record log (outcome, usage, ids, times) in place of the
// history; kept as nothing: gone from the catalogue. Rules by logic over a default; a tree retained together, only once
// its root ended; a store failure mid-removal loses no summary; bad rules are typed errors. Memory, fs and IndexedDB.
import "fake-indexeddb/auto";
import { afterAll, describe, expect, it } from "vitest";
import { setup } from "xstate";
import {
  agentLoop$,
  agentTool,
  ConfigError,
  createApp,
  createLlmEffect,
  defineConfig,
  memoryStores,
  scriptedModel,
  simulatedClock,
  type Stores,
} from "../../index.js";
import { fsStores } from "../../adapters/fs/index.js";
import { indexedDbStores } from "../../adapters/indexeddb/index.js";
import { applyRetention, RETENTION_LOGIC_ID } from "../../lifecycle.js";
import { EXECUTION_ENDED, EXECUTION_STARTED } from "../../stores/schema.js";
import { tempDirs } from "../support/tempDirs.js";

const { tempDir, removeTempDirs } = tempDirs("expiry");
afterAll(removeTempDirs);

const DAY = 86_400_000;
const researcher = agentLoop$({ id: "researcher", model: "model", warnTranscriptBytes: false });
const lead = agentLoop$({
  id: "lead",
  model: "model",
  tools: [agentTool(researcher, { description: "Research" })],
  warnTranscriptBytes: false,
});
const model = createLlmEffect(
  scriptedModel((request) =>
    request.tools?.length && !request.messages.some((m) => m.role === "tool")
      ? {
          toolCalls: [{ toolName: "researcher", input: { prompt: "owls" } }],
          usage: { inputTokens: 7, outputTokens: 3 },
        }
      : { text: "done", usage: { inputTokens: 5, outputTokens: 1 } },
  ),
);
const waiting = setup({}).createMachine({
  id: "waiting",
  initial: "idle",
  states: { idle: { on: { GO: "over" } }, over: { type: "final" } },
});

const kinds: [string, () => Promise<Stores & { close?(): Promise<void> }>][] = [
  ["memory", async () => memoryStores()],
  ["fs", async () => fsStores({ dir: await tempDir("fs") })],
  ["IndexedDB", async () => indexedDbStores({ name: `expiry-${Math.random()}` })],
];

describe.each(kinds)("applyRetention on %s", (_, open) => {
  it("keeps a summary of each tree past its period, leaves the rest, and is journaled", async () => {
    const stores = await open();
    const clock = simulatedClock(1_000);
    const app = createApp(defineConfig({ stores, clock, effects: { model }, retention: { keepFor: DAY } }));
    await app.start(lead, { executionId: "old", input: { prompt: "x" } });
    await app.result("old");
    clock.advance(2 * DAY);
    await app.start(lead, { executionId: "new", input: { prompt: "y" } });
    await app.result("new");
    await app.start(waiting, { executionId: "open" });
    const before = await stores.events.getExecution("old");

    const result = await applyRetention(app);
    expect(result).toMatchObject({ summarized: 2, removed: 0, batches: 1 });
    expect(result.retentionId).toBe(`${RETENTION_LOGIC_ID}:1`);
    // The old tree: two records each, its outcome, usage and times kept; the catalogue still lists it.
    for (const id of ["old", "old/tool:0:0"]) {
      const log = await app.log(id);
      expect(log.map((r) => r.type)).toEqual([EXECUTION_STARTED, EXECUTION_ENDED]);
      expect(log[0]).toMatchObject({ input: null });
    }
    expect(await app.result("old")).toEqual({
      retained: "summary",
      usage: { modelCalls: 2, inputTokens: 12, outputTokens: 4, totalTokens: 16 },
    });
    expect(await stores.events.getExecution("old")).toMatchObject({
      status: "done",
      startedAt: before!.startedAt,
      endedAt: before!.endedAt,
      head: 2,
    });
    expect((await stores.events.getExecution("old/tool:0:0"))?.parentId).toBe("old");
    // The new tree and the running execution are whole.
    expect((await app.log("new")).length).toBeGreaterThan(2);
    expect((await stores.events.getExecution("open"))?.status).toBe("running");
    // Again: nothing more is due.
    expect(await applyRetention(app)).toMatchObject({ summarized: 0, removed: 0, batches: 0 });
    // A rule of nothing removes the summaries too.
    expect(await applyRetention(app, { keepFor: DAY, keep: "nothing" })).toMatchObject({ removed: 2 });
    expect(await stores.events.getExecution("old")).toBeUndefined();
    await app.close();
    await stores.close?.();
  });

  it("keeps nothing where a logic's rule says so, over the default", async () => {
    const stores = await open();
    const clock = simulatedClock(1_000);
    const app = createApp(defineConfig({ stores, clock, effects: { model } }));
    await app.start(researcher, { executionId: "r1", input: { prompt: "x" } });
    await app.start(lead, { executionId: "l1", input: { prompt: "x" } });
    await Promise.all([app.result("r1"), app.result("l1")]);
    clock.advance(10);
    const result = await applyRetention(app, {
      keepFor: 5,
      keep: "summary",
      logics: { researcher: { keepFor: 0, keep: "nothing" } },
    });
    expect(result).toMatchObject({ removed: 1, summarized: 2 });
    expect(await stores.events.getExecution("r1")).toBeUndefined();
    expect((await app.log("l1")).length).toBe(2);
    await app.close();
    await stores.close?.();
  });
});

describe("applyRetention: trees, failures and bad rules", () => {
  it("leaves a child whose root still runs", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const slow = createLlmEffect(
      scriptedModel(async (request) => {
        if (request.tools?.length && !request.messages.some((m) => m.role === "tool"))
          return {
            toolCalls: [
              { toolName: "researcher", input: { prompt: "a" } },
              { toolName: "researcher", input: { prompt: "b" } },
            ],
          };
        if (!request.tools?.length && String(request.messages.at(-1)?.content) === "b") await gate;
        return { text: "done" };
      }),
    );
    const stores = memoryStores();
    const clock = simulatedClock(0);
    const app = createApp(defineConfig({ stores, clock, effects: { model: slow } }));
    await app.start(lead, { executionId: "t", input: { prompt: "x" } });
    const deadline = Date.now() + 10_000;
    while ((await stores.events.getExecution("t/tool:0:0"))?.status !== "done" && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 5));
    clock.advance(DAY);
    expect(await applyRetention(app, { keepFor: 0 })).toMatchObject({ summarized: 0, removed: 0 });
    expect((await app.log("t/tool:0:0")).length).toBeGreaterThan(2);
    open();
    await app.result("t");
    expect(await applyRetention(app, { keepFor: 0 })).toMatchObject({ summarized: 3 });
    await app.close();
  });

  it("loses no summary when the store fails between removing a history and writing its summary", async () => {
    const stores = memoryStores();
    const append = stores.events.append.bind(stores.events);
    let failOnce = true;
    stores.events.append = async (executionId, expectedSeq, records) => {
      if (failOnce && executionId === "b" && expectedSeq === 0 && records[0]?.input === null) {
        failOnce = false;
        throw new Error("disk gone");
      }
      return append(executionId, expectedSeq, records);
    };
    const clock = simulatedClock(0);
    const app = createApp(defineConfig({ stores, clock, effects: { model } }));
    for (const id of ["a", "b", "c"]) {
      await app.start(researcher, { executionId: id, input: { prompt: id } });
      await app.result(id);
    }
    clock.advance(DAY);
    await expect(applyRetention(app, { keepFor: 0 })).rejects.toThrow();
    // "b" lost its history and has no summary yet: the next run writes it from the failed run's journal.
    expect(await stores.events.getExecution("b")).toBeUndefined();
    // The failed run's batch is finished first (the repair); the new run then finds nothing due.
    expect(await applyRetention(app, { keepFor: 0 })).toMatchObject({ summarized: 0, removed: 0 });
    for (const id of ["a", "b", "c"]) expect(await app.result(id)).toMatchObject({ retained: "summary" });
    await app.close();
  });

  it("refuses bad rules with typed errors, storing nothing", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));
    await expect(applyRetention(app)).rejects.toThrow(/no rules/);
    await expect(applyRetention(app, { keepFor: -1 })).rejects.toThrow(/retention.keepFor/);
    await expect(applyRetention(app, { keepFor: 1, keep: "some" as never })).rejects.toThrow(/retention.keep/);
    await expect(applyRetention(app, { logics: { x: { keepFor: Number.NaN } } })).rejects.toThrow(ConfigError);
    await expect(applyRetention(app, { keepFor: 1, batchSize: 0 })).rejects.toThrow(/batchSize/);
    expect(await app.executions()).toEqual([]);
    expect(() =>
      createApp(defineConfig({ stores: memoryStores(), effects: {}, retention: { keepFor: "1d" as never } })),
    ).toThrow(/retention.keepFor/);
    expect(() =>
      createApp(defineConfig({ stores: memoryStores(), effects: {}, retention: { keepfor: 1 } as never })),
    ).toThrow(/retention.keepfor/);
    await app.close();
  });
});
