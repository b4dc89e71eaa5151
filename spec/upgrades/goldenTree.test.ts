// The golden journals of schema 4 (./goldenV4.ts): a tree's logs as stored, replayed by a fresh app on memory and fs
// stores. The ended tree answers from its logs and runs nothing; the tree left with the child's call in flight
// resumes to the same output running that call only, each message journaled once.
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { fsStores } from "../../adapters/fs/index.js";
import { EVENT_RECEIVED, EVENT_SCHEMA, EXECUTION_STARTED } from "../../stores/schema.js";
import { memoryStores } from "../../stores/memory.js";
import type { Stores } from "../../stores/types.js";
import { parent } from "../children/machines.js";
import { GOLDEN_TREE_MID_V4_FIXTURE, GOLDEN_TREE_V4_FIXTURE, type GoldenTree } from "./goldenV4.js";
import { removeTempDirs, tempDir } from "./support.js";

afterAll(removeTempDirs);

const ended = JSON.parse(readFileSync(GOLDEN_TREE_V4_FIXTURE, "utf8")) as GoldenTree;
const mid = JSON.parse(readFileSync(GOLDEN_TREE_MID_V4_FIXTURE, "utf8")) as GoldenTree;
const expected = { seen: ["progress", "pong"], result: { doubled: 42 } };

async function load(stores: Stores, golden: GoldenTree): Promise<void> {
  for (const [id, records] of Object.entries(golden.logs)) await stores.events.append(id, 0, structuredClone(records));
}

function counted() {
  const calls: string[] = [];
  return { calls, effects: { double: createToolEffect(async (n: number, ctx) => (calls.push(ctx.stepId), n * 2)) } };
}

describe("golden journals of schema 4: a tree", () => {
  it("hold what schema 4 added: a child's parent and root, a message's sender and id, the outbox's acknowledgements", () => {
    expect(ended.schema).toBe(4);
    expect(ended.schema).toBeLessThanOrEqual(EVENT_SCHEMA.version);
    expect(Object.keys(ended.logs)).toEqual(["golden-tree", "golden-tree/w"]);
    expect(ended.logs["golden-tree/w"]![0]).toMatchObject({
      type: EXECUTION_STARTED,
      subject: "user-3",
      parent: { executionId: "golden-tree", childId: "w" },
      root: "golden-tree",
    });
    const received = ended.logs["golden-tree"]!.filter((r) => r.type === EVENT_RECEIVED);
    expect(received.map((r) => r.from)).toEqual([
      { executionId: "golden-tree/w", messageId: expect.stringMatching(/^golden-tree\/w@\d+:0$/) },
      { executionId: "golden-tree/w", messageId: expect.stringMatching(/^golden-tree\/w@\d+:0$/) },
    ]);
    expect(
      Object.values(ended.logs)
        .flat()
        .some((r) => r.type === "loom.messages.delivered"),
    ).toBe(true);
  });

  for (const adapter of ["memory", "fs"] as const) {
    it(`the ended tree replays on ${adapter}: its output from the logs, nothing run, every execution rebuilt`, async () => {
      const stores = adapter === "memory" ? memoryStores() : await fsStores({ dir: await tempDir("golden-tree") });
      await load(stores, ended);
      const { calls, effects } = counted();
      const app = createApp(defineConfig({ stores, effects, logics: [parent] }));
      expect(await app.result("golden-tree")).toEqual(expected);
      for (const id of Object.keys(ended.logs)) {
        const actor = await app.resume(id);
        expect(actor.getSnapshot().status).toBe("done");
        expect(actor.replay.stepsToRun).toBe(0);
      }
      expect(calls).toEqual([]);
      await app.close();
      if ("close" in stores && typeof stores.close === "function") await stores.close();
    });

    it(`the tree left mid-call resumes on ${adapter} to the same output, running only the call in flight`, async () => {
      const stores = adapter === "memory" ? memoryStores() : await fsStores({ dir: await tempDir("golden-tree-mid") });
      await load(stores, mid);
      const { calls, effects } = counted();
      const app = createApp(defineConfig({ stores, effects, logics: [parent] }));
      expect((await app.resumeUnfinished()).failed).toEqual([]);
      expect(await app.result("golden-tree-mid")).toEqual(expected);
      expect(calls).toEqual(["worker#0.worker.doubling:1"]);
      const types = (await app.log("golden-tree-mid"))
        .filter((r) => r.type === EVENT_RECEIVED)
        .map((r) => (r.type === EVENT_RECEIVED ? r.event.type : ""));
      expect(types).toEqual(["PROGRESS", "PONG"]);
      await app.close();
      if ("close" in stores && typeof stores.close === "function") await stores.close();
    });
  }
});
