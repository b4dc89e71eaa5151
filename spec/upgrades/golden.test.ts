// Golden journals and versions: the journal this release writes (schema 2: a declared version, a patch
// marker) replays as recorded, pinned to its version; the journals of schema 1 (no version) run on the
// current definition of their logic id, whatever version it declares now.
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { UnknownLogicVersionError } from "../../actors/errors.js";
import { fsStores } from "../../adapters/fs/index.js";
import { memoryStores } from "../../stores/memory.js";
import { EVENT_SCHEMA, EXECUTION_STARTED, PATCH_MARKED } from "../../stores/schema.js";
import type { StoredRecord, Stores } from "../../stores/types.js";
import { demoMachine } from "../support/demoMachine.js";
import { countedDemoEffects } from "../support/harness.js";
import { GOLDEN_FLOW_FIXTURE, goldenFlow } from "./goldenFlow.js";
import { countedEffects, flow, patchedFlow, removeTempDirs, tempDir } from "./support.js";

afterAll(removeTempDirs);

type Golden = { schema: number; executionId: string; records: StoredRecord[] };
const v2 = JSON.parse(readFileSync(GOLDEN_FLOW_FIXTURE, "utf8")) as Golden;
const demoV1 = JSON.parse(readFileSync(new URL("../fixtures/demo-v1.journal.json", import.meta.url), "utf8")) as Golden;

async function load(stores: Stores, golden: Golden): Promise<void> {
  await stores.events.append(golden.executionId, 0, structuredClone(golden.records));
}

describe("golden journals and versions", () => {
  it("versioned-v2 holds what schema 2 added: a declared version and one patch marker", () => {
    expect(v2.schema).toBe(2);
    expect(v2.schema).toBeLessThanOrEqual(EVENT_SCHEMA.version);
    expect(v2.records[0]).toMatchObject({ type: EXECUTION_STARTED, logicId: "flow", version: "2", schema: 2 });
    expect(v2.records.filter((r) => r.type === PATCH_MARKED)).toEqual([expect.objectContaining({ changeId: "greet" })]);
  });

  for (const adapter of ["memory", "fs"] as const) {
    it(`versioned-v2 replays on ${adapter} on its version among others, running nothing; refused without it`, async () => {
      const stores: Stores & { close?(): Promise<void> } = adapter === "memory" ? memoryStores() : await fsStores({ dir: await tempDir("golden") });
      await load(stores, v2);
      const { effects, total } = countedEffects();
      const app = createApp(defineConfig({ stores, effects, logics: [patchedFlow({ version: "1" }), goldenFlow, flow({ version: "3", shape: "review" })] }));
      const actor = await app.resume(v2.executionId);
      expect(total()).toBe(0);
      expect(actor.replay.recordsReplayed).toBe(v2.records.length);
      expect(await app.result(v2.executionId)).toEqual(v2.records.at(-1)!.output);
      expect(await app.log(v2.executionId)).toEqual(v2.records);
      await app.close();
      const without = createApp(defineConfig({ stores, effects, logics: [flow({ version: "3", shape: "review" })] }));
      await expect(without.resume(v2.executionId)).rejects.toBeInstanceOf(UnknownLogicVersionError);
      await without.close();
      await stores.close?.();
    });
  }

  it("a schema-1 journal (no version) runs on its logic id's current definition, whatever version it declares", async () => {
    const stores = memoryStores();
    await load(stores, demoV1);
    const { effects, runs } = countedDemoEffects();
    // The demo machine as it is today, now declaring a version: the old journal is pinned to none.
    const declared = demoMachine.provide({});
    Object.defineProperty(declared, "version", { value: "5" });
    const app = createApp(defineConfig({ stores, effects, logics: [declared] }));
    const actor = await app.resume(demoV1.executionId);
    expect(runs.size).toBe(0);
    expect(actor.getSnapshot().status).toBe("done");
    expect((await app.checkReplay(declared)).ok).toBe(true);
    await app.close();
  });
});
