// The golden journals of schema version 4 (ADR 0012: child executions): a tree of a parent and its child machine
// exchanging messages, run to its end, and the same tree left with the child's call in flight, on a fixed clock,
// every log as the store holds it. Generated once into spec/fixtures/tree{,-mid}-v4.logs.json (a tree: several logs, so not a *.journal.json, which hold one) by
// `npx tsx spec/upgrades/goldenV4.ts` and replayed on every run (spec/upgrades/goldenTree.test.ts). Never regenerate
// them to make a failing replay pass: a change that breaks them needs a schema version bump and a reader for this one.
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createApp } from "../../actors/app.js";
import { simulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { EVENT_SCHEMA } from "../../stores/schema.js";
import { memoryStores } from "../../stores/memory.js";
import type { StoredRecord, Stores } from "../../stores/types.js";
import { parent } from "../children/machines.js";

export const GOLDEN_TREE_V4_FIXTURE = new URL("../fixtures/tree-v4.logs.json", import.meta.url);
export const GOLDEN_TREE_MID_V4_FIXTURE = new URL("../fixtures/tree-mid-v4.logs.json", import.meta.url);

export type GoldenTree = { schema: number; root: string; logs: Record<string, StoredRecord[]> };

async function logsOf(stores: Stores): Promise<Record<string, StoredRecord[]>> {
  const ids = (await stores.events.listExecutions()).map((e) => e.executionId).sort();
  return Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await stores.events.read(id)] as const)));
}

/** The tree run to its end. */
export async function writeGoldenTree(path: URL = GOLDEN_TREE_V4_FIXTURE): Promise<GoldenTree> {
  const stores = memoryStores();
  const effects = { double: createToolEffect(async (n: number) => n * 2) };
  const app = createApp(defineConfig({ stores, effects, clock: simulatedClock(1_796_428_800_000) }));
  await app.start(parent, { executionId: "golden-tree", subject: "user-3" });
  await app.result("golden-tree");
  await app.close();
  const golden = { schema: EVENT_SCHEMA.version, root: "golden-tree", logs: await logsOf(stores) };
  await writeFile(path, `${JSON.stringify(golden, null, 1)}\n`);
  return golden;
}

/** The tree left by a closed app with the child's call in flight. */
export async function writeGoldenTreeMid(path: URL = GOLDEN_TREE_MID_V4_FIXTURE): Promise<GoldenTree> {
  const stores = memoryStores();
  let started!: () => void;
  const called = new Promise<void>((resolve) => (started = resolve));
  const effects = { double: createToolEffect(() => (started(), new Promise<number>(() => undefined))) };
  const app = createApp(defineConfig({ stores, effects, clock: simulatedClock(1_796_428_800_000) }));
  await app.start(parent, { executionId: "golden-tree-mid" });
  await called;
  await app.close();
  const golden = { schema: EVENT_SCHEMA.version, root: "golden-tree-mid", logs: await logsOf(stores) };
  await writeFile(path, `${JSON.stringify(golden, null, 1)}\n`);
  return golden;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeGoldenTree();
  await writeGoldenTreeMid();
}
