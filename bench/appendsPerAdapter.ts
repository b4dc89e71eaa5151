// Appends per second of the 200-turn agent run on each adapter, side by side (issue 7 asks for the figure).
// Absolute rates on a shared machine are noisy: read them beside each other, not against another run.
// Run: npx tsx bench/appendsPerAdapter.ts
import "fake-indexeddb/auto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentLoop$, createApp, defineConfig, memoryStores, type Stores } from "../index.js";
import { fsStores } from "../adapters/fs/index.js";
import { indexedDbStores } from "../adapters/indexeddb/index.js";
import { workloadEffects } from "../spec/support/workload.js";
const TURNS = 200;
async function once(kind: string): Promise<[number, number]> {
  let stores: Stores & { close?: () => Promise<void> };
  let dir = "";
  if (kind === "memory") stores = memoryStores();
  else if (kind === "fs") {
    dir = mkdtempSync(join(tmpdir(), "ap-"));
    stores = await fsStores({ dir });
  } else stores = await indexedDbStores({ name: `ap-${Math.random()}` });
  let appends = 0;
  const app = createApp(defineConfig({ stores, effects: workloadEffects(TURNS).effects }));
  app.on("append", () => appends++);
  const t = performance.now();
  await app.start(
    agentLoop$({ id: "a", model: "model", tools: ["search"], maxTurns: TURNS, warnTranscriptBytes: false }),
    { executionId: "r", input: { prompt: "x" } },
  );
  await app.result("r");
  const ms = performance.now() - t;
  await app.close();
  await (stores as any).events.close?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
  return [appends, ms];
}
const rows: Record<string, number[]> = { memory: [], fs: [], indexeddb: [] };
for (let rep = 0; rep < 3; rep++)
  for (const k of Object.keys(rows)) {
    const [n, ms] = await once(k);
    rows[k]!.push(n / (ms / 1000));
  }
for (const [k, v] of Object.entries(rows)) {
  v.sort((a, b) => a - b);
  console.log(`${k}: ${Math.round(v[1]!)} appends/s (median of 3; ${v.map(Math.round).join(", ")})`);
}
