// The golden journal of schema version 2 (issue 16): the flow at a declared version "2", with its
// CONTINUE branch guarded by patched("greet"), run to its end on a fixed clock. Generated once into
// spec/fixtures/versioned-v2.journal.json by `npx tsx spec/upgrades/goldenFlow.ts` and replayed on every
// run (spec/upgrades/goldenVersions.test.ts, spec/upgrades/goldenReplay.test.ts). Never regenerate it to make a
// failing replay pass: a change that breaks it needs a schema version bump and a reader for this one.
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createApp } from "../../actors/app.js";
import { simulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import { EVENT_SCHEMA } from "../../stores/schema.js";
import { memoryStores } from "../../stores/memory.js";
import type { StoredRecord } from "../../stores/types.js";
import { countedEffects, patchedFlow } from "./support.js";

export const GOLDEN_FLOW_EXECUTION_ID = "golden-flow-v2";
export const GOLDEN_FLOW_FIXTURE = new URL("../fixtures/versioned-v2.journal.json", import.meta.url);

/** The logic the golden flow journal was written by. */
export const goldenFlow = patchedFlow({ version: "2" });

export async function writeGoldenFlowJournal(
  path: string | URL,
): Promise<{ schema: number; executionId: string; records: StoredRecord[] }> {
  const stores = memoryStores();
  const app = createApp(
    defineConfig({ stores, effects: countedEffects().effects, clock: simulatedClock(1_796_083_200_000) }),
  );
  const actor = await app.start(goldenFlow, {
    executionId: GOLDEN_FLOW_EXECUTION_ID,
    subject: "user-9",
    input: { name: "golden" },
  });
  await actor.settled();
  await actor.sendAsync({ type: "CONTINUE" });
  await actor.settled();
  await actor.sendAsync({ type: "CLOSE" });
  await app.result(GOLDEN_FLOW_EXECUTION_ID);
  const golden = {
    schema: EVENT_SCHEMA.version,
    executionId: GOLDEN_FLOW_EXECUTION_ID,
    records: await app.log(GOLDEN_FLOW_EXECUTION_ID),
  };
  await writeFile(path, `${JSON.stringify(golden, null, 1)}\n`);
  await app.close();
  return golden;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  await writeGoldenFlowJournal(GOLDEN_FLOW_FIXTURE);
