// Campaign 10: upgrades. Every golden journal of a released schema version (spec/fixtures/*.journal.json:
// demo-v1, agent-v1, versioned-v2, agent-v3, flow-v3) replays unchanged on every adapter: written into a fresh memory, fs or
// IndexedDB store as recorded, resumed by a fresh app with no effect run, to the recorded end and
// output; and a golden log keeps replaying after the fs adapter closes and reopens it.
import "fake-indexeddb/auto";
import { readdirSync, readFileSync } from "node:fs";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import type { AnyStateMachine } from "xstate";
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import type { Effect } from "../../actors/effects/effect.js";
import { fsStores } from "../../adapters/fs/index.js";
import { indexedDbStores } from "../../adapters/indexeddb/index.js";
import { EVENT_SCHEMA, EXECUTION_ENDED, EXECUTION_STARTED } from "../../stores/schema.js";
import { memoryStores } from "../../stores/memory.js";
import { expandRecords } from "../../stores/recordFormat.js";
import type { Stores } from "../../stores/types.js";
import { demoMachine } from "../support/demoMachine.js";
import { countedDemoEffects } from "../support/harness.js";
import { goldenAgent, goldenAgentEffects, type GoldenJournal } from "./goldenAgent.js";
import { goldenFlow } from "./goldenFlow.js";
import { countedEffects } from "./support.js";
import { contiguous, removeTempDirs, tempDir } from "../reliability/support.js";

afterAll(removeTempDirs);

const FIXTURES = new URL("../fixtures/", import.meta.url);
/** The logic and counted effects each golden journal was recorded with, by logic id. */
const LOGICS: Record<
  string,
  () => { logic: AnyStateMachine; effects: Record<string, Effect>; runs: Map<string, number> }
> = {
  demo: () => {
    const { effects, runs } = countedDemoEffects();
    return { logic: demoMachine, effects, runs };
  },
  "golden-agent": () => {
    const runs = new Map<string, number>();
    return { logic: goldenAgent, effects: goldenAgentEffects(runs), runs };
  },
  // Schema 2 (issue 16): a declared version and a patch marker (spec/upgrades/goldenFlow.ts).
  flow: () => {
    const { effects, runs } = countedEffects();
    return { logic: goldenFlow, effects, runs };
  },
};

const goldens = readdirSync(FIXTURES)
  .filter((name) => name.endsWith(".journal.json"))
  .map((name) => ({ name, journal: JSON.parse(readFileSync(new URL(name, FIXTURES), "utf8")) as GoldenJournal }));

type Opened = Stores & { close?(): Promise<void> };
const ADAPTERS: Record<string, () => Promise<Opened>> = {
  memory: async () => memoryStores(),
  fs: async () => fsStores({ dir: await tempDir("golden") }),
  indexeddb: () => indexedDbStores({ name: "golden", indexedDB: new IDBFactory(), IDBKeyRange }),
};

async function replay(stores: Stores, golden: GoldenJournal): Promise<void> {
  const logicId = golden.records[0]!.logicId as string;
  const { logic, effects, runs } = LOGICS[logicId]!();
  const app = createApp(defineConfig({ stores, effects, logics: [logic] }));
  const actor = await app.resume(golden.executionId);
  expect(runs.size, `${golden.executionId}: no effect re-run`).toBe(0);
  expect(actor.replay.recordsReplayed).toBe(golden.records.length);
  expect(actor.replay.stepsToRun).toBe(0);
  const ended = golden.records.at(-1)!;
  expect(actor.getSnapshot().status).toBe(ended.status === "done" ? "done" : "error");
  expect(await app.result(golden.executionId)).toEqual(ended.output);
  // Read back as recorded, in the read form (schema 3 stores records compact: stores/recordFormat.ts; earlier ones read unchanged).
  expect(await app.log(golden.executionId), "the log is read back as recorded").toEqual(expandRecords(golden.records));
  await app.close();
}

describe("golden journals of every released schema version replay unchanged on every adapter", () => {
  it("has a golden journal for the demo machine and for an agent", () => {
    expect(goldens.map((g) => g.name).sort()).toEqual(
      expect.arrayContaining([
        "agent-v1.journal.json",
        "agent-v3.journal.json",
        "demo-v1.journal.json",
        "flow-v3.journal.json",
        "versioned-v2.journal.json",
      ]),
    );
    for (const { name, journal } of goldens) {
      expect(journal.schema, name).toBeLessThanOrEqual(EVENT_SCHEMA.version);
      expect(journal.records[0], name).toMatchObject({ type: EXECUTION_STARTED, schema: journal.schema });
      expect(journal.records.at(-1), name).toMatchObject({ type: EXECUTION_ENDED });
      expect(contiguous(journal.records), name).toBe(true);
      expect(LOGICS[journal.records[0]!.logicId as string], `${name}: its logic is known to this test`).toBeDefined();
    }
  });

  for (const { name, journal } of goldens) {
    for (const [adapter, open] of Object.entries(ADAPTERS)) {
      it(`replays ${name} unchanged on ${adapter}`, async () => {
        const stores = await open();
        await stores.events.append(journal.executionId, 0, structuredClone(journal.records));
        await replay(stores, journal);
        expect(await stores.events.getExecution(journal.executionId)).toMatchObject({
          status: "done",
          head: journal.records.length,
        });
        await stores.close?.();
      });
    }
  }

  it("replays a golden log that the fs adapter closed and reopened", async () => {
    for (const { journal } of goldens) {
      const dir = await tempDir("golden-reopen");
      const first = await fsStores({ dir });
      await first.events.append(journal.executionId, 0, journal.records);
      await first.close();
      const reopened = await fsStores({ dir });
      await replay(reopened, journal);
      await reopened.close();
    }
  });
});
