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
import { EVENT_SCHEMA, EXECUTION_STARTED, PATCH_MARKED, STEP_COMPLETED, TRANSITION } from "../../stores/schema.js";
import type { StoredRecord, Stores } from "../../stores/types.js";
import { demoMachine } from "../support/demoMachine.js";
import { countedDemoEffects } from "../support/harness.js";
import { GOLDEN_FLOW_FIXTURE, goldenFlow } from "./goldenFlow.js";
import { GOLDEN_AGENT_V3_FIXTURE, GOLDEN_FLOW_V3_FIXTURE } from "./goldenV3.js";
import { goldenAgent, goldenAgentEffects } from "./goldenAgent.js";
import { countedEffects, flow, patchedFlow, removeTempDirs, tempDir } from "./support.js";
import { checkReplay } from "../../upgrades.js";

afterAll(removeTempDirs);

type Golden = { schema: number; executionId: string; records: StoredRecord[] };
const v2 = JSON.parse(readFileSync(GOLDEN_FLOW_FIXTURE, "utf8")) as Golden;
const demoV1 = JSON.parse(readFileSync(new URL("../fixtures/demo-v1.journal.json", import.meta.url), "utf8")) as Golden;
const flowV3 = JSON.parse(readFileSync(GOLDEN_FLOW_V3_FIXTURE, "utf8")) as Golden;
const agentV3 = JSON.parse(readFileSync(GOLDEN_AGENT_V3_FIXTURE, "utf8")) as Golden;
const agentV1 = JSON.parse(
  readFileSync(new URL("../fixtures/agent-v1.journal.json", import.meta.url), "utf8"),
) as Golden;

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
      const stores: Stores & { close?(): Promise<void> } =
        adapter === "memory" ? memoryStores() : await fsStores({ dir: await tempDir("golden") });
      await load(stores, v2);
      const { effects, total } = countedEffects();
      const app = createApp(
        defineConfig({
          stores,
          effects,
          logics: [patchedFlow({ version: "1" }), goldenFlow, flow({ version: "3", shape: "review" })],
        }),
      );
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
    expect((await checkReplay(app, declared)).ok).toBe(true);
    await app.close();
  });

  it("flow-v3 and agent-v3 hold schema 3's stored form: no transition `from`, no derivable `event`, no model `usage` twice", () => {
    for (const golden of [flowV3, agentV3]) {
      expect(golden.schema).toBe(3);
      expect(golden.records[0]).toMatchObject({ type: EXECUTION_STARTED, schema: 3 });
      const transitions = golden.records.filter((r) => r.type === TRANSITION);
      expect(transitions.length).toBeGreaterThan(3);
      for (const t of transitions) {
        expect(t).not.toHaveProperty("from");
        expect(t).not.toHaveProperty("event");
      }
    }
    // A step outcome whose child id is not its effect's names the child; the model's (child "model") names nothing.
    expect(flowV3.records.filter((r) => r.type === TRANSITION).map((t) => t.actor)).toEqual([
      undefined,
      "prepare",
      undefined,
      "greet",
      "finish",
      undefined,
    ]);
    const models = agentV3.records.filter((r) => r.type === STEP_COMPLETED && r.effectId === "model");
    expect(models).toHaveLength(3);
    for (const m of models) {
      expect(m).not.toHaveProperty("usage");
      expect(m.output).toHaveProperty("usage");
    }
  });

  it("app.log reads schema 3 back as the records schema 2 and 1 wrote for the same runs", async () => {
    const stores = memoryStores();
    await load(stores, flowV3);
    await load(stores, agentV3);
    const app = createApp(
      defineConfig({
        stores,
        effects: { ...countedEffects().effects, ...goldenAgentEffects() },
        logics: [goldenFlow, goldenAgent],
      }),
    );
    // The same flow on the same clock, journaled by schema 2: only the start's schema differs.
    const [v2Start, ...v2Rest] = v2.records;
    expect(await app.log(flowV3.executionId)).toEqual([{ ...v2Start, schema: 3 }, ...v2Rest]);
    // The golden agent of schema 1 (a definition since edited: its hash; schema 1 journaled no input digest).
    const [, v1Init, ...v1Rest] = agentV1.records;
    const [started, init, ...rest] = await app.log(agentV3.executionId);
    expect(started).toEqual({ ...agentV1.records[0], machineHash: agentV3.records[0]!.machineHash, schema: 3 });
    expect(init).toEqual({ ...v1Init, inputDigest: agentV3.records[1]!.inputDigest });
    expect(rest).toEqual(v1Rest);
    expect(await app.usage(agentV3.executionId)).toMatchObject({
      modelCalls: 3,
      inputTokens: 42 + 120 + 180,
      outputTokens: 12 + 9 + 15,
    });
    await app.close();
  });

  for (const adapter of ["memory", "fs"] as const) {
    it(`flow-v3 and agent-v3 replay on ${adapter} running nothing; a divergence reports the transition whole`, async () => {
      const stores: Stores & { close?(): Promise<void> } =
        adapter === "memory" ? memoryStores() : await fsStores({ dir: await tempDir("golden-v3") });
      await load(stores, flowV3);
      await load(stores, agentV3);
      const flowEffects = countedEffects();
      const runs = new Map<string, number>();
      const app = createApp(
        defineConfig({
          stores,
          effects: { ...flowEffects.effects, ...goldenAgentEffects(runs) },
          logics: [goldenFlow, goldenAgent],
        }),
      );
      for (const golden of [flowV3, agentV3]) {
        const actor = await app.resume(golden.executionId);
        expect(actor.replay.recordsReplayed).toBe(golden.records.length);
        expect(await app.result(golden.executionId)).toEqual(golden.records.at(-1)!.output);
      }
      expect(flowEffects.total() + runs.size).toBe(0);
      expect((await checkReplay(app, goldenFlow)).ok).toBe(true);
      expect((await checkReplay(app, goldenAgent)).ok).toBe(true);
      // Without the patched guard, CONTINUE takes the old path: the journal's transition is reported with the `from` it derives.
      const report = await checkReplay(app, flow({ version: "2" }), { executionIds: [flowV3.executionId] });
      expect(report.results[0]).toMatchObject({
        status: "diverges",
        seq: 7,
        produced: { to: "finishing" },
        journal: { type: TRANSITION, from: "waiting", to: "greeting", event: "CONTINUE" },
      });
      await app.close();
      await stores.close?.();
    });
  }
});
