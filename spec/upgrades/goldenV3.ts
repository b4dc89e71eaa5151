// The golden journals of schema version 3 (the stored form of ADR 0009, stores/recordFormat.ts): the golden
// agent (./goldenAgent.ts) and the golden flow (./goldenFlow.ts) run again on their fixed
// clocks, written as the store holds them. Generated once into spec/fixtures/{agent,flow}-v3.journal.json by
// `npx tsx spec/upgrades/goldenV3.ts` and replayed on every run (spec/upgrades/goldenVersions.test.ts,
// spec/upgrades/goldenReplay.test.ts). Never regenerate them to make a failing replay pass: a change that
// breaks them needs a schema version bump and a reader for this one.
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createApp } from "../../actors/app.js";
import { simulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import { EVENT_SCHEMA } from "../../stores/schema.js";
import { memoryStores } from "../../stores/memory.js";
import type { StoredRecord } from "../../stores/types.js";
import { goldenAgent, goldenAgentEffects } from "./goldenAgent.js";
import { goldenFlow } from "./goldenFlow.js";
import { countedEffects } from "./support.js";

export const GOLDEN_AGENT_V3_FIXTURE = new URL("../fixtures/agent-v3.journal.json", import.meta.url);
export const GOLDEN_FLOW_V3_FIXTURE = new URL("../fixtures/flow-v3.journal.json", import.meta.url);

type Golden = { schema: number; executionId: string; records: StoredRecord[] };

async function write(path: URL, golden: Golden): Promise<Golden> {
  await writeFile(path, `${JSON.stringify(golden, null, 1)}\n`);
  return golden;
}

/** The golden agent's run, as stored. */
export async function writeGoldenAgentV3(path: URL = GOLDEN_AGENT_V3_FIXTURE): Promise<Golden> {
  const stores = memoryStores();
  const executionId = "golden-agent-v3";
  const app = createApp(
    defineConfig({ stores, effects: goldenAgentEffects(), clock: simulatedClock(1_795_910_400_000) }),
  );
  await app.start(goldenAgent, {
    executionId,
    subject: "user-7",
    input: { prompt: "Where do barn owls live, and what do they eat?" },
  });
  await app.result(executionId);
  const golden = { schema: EVENT_SCHEMA.version, executionId, records: await stores.events.read(executionId) };
  await app.close();
  return write(path, golden);
}

/** The golden flow's run (a declared version, a patch marker, two events), as stored. */
export async function writeGoldenFlowV3(path: URL = GOLDEN_FLOW_V3_FIXTURE): Promise<Golden> {
  const stores = memoryStores();
  const executionId = "golden-flow-v3";
  const app = createApp(
    defineConfig({ stores, effects: countedEffects().effects, clock: simulatedClock(1_796_083_200_000) }),
  );
  const actor = await app.start(goldenFlow, { executionId, subject: "user-9", input: { name: "golden" } });
  await actor.settled();
  await actor.sendAsync({ type: "CONTINUE" });
  await actor.settled();
  await actor.sendAsync({ type: "CLOSE" });
  await app.result(executionId);
  const golden = { schema: EVENT_SCHEMA.version, executionId, records: await stores.events.read(executionId) };
  await app.close();
  return write(path, golden);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeGoldenAgentV3();
  await writeGoldenFlowV3();
}
