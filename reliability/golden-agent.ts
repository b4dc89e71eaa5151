// Writes spec/fixtures/agent-v1.journal.json, the golden agent journal of schema version 1 (campaign 10).
// Run once, when a schema version is released: `npx tsx reliability/golden-agent.ts` (refuses to
// overwrite; pass --force only together with a schema version bump, never to make a replay pass).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { writeGoldenAgentJournal } from "../spec/upgrades/goldenAgent.js";

const path = fileURLToPath(new URL("../spec/fixtures/agent-v1.journal.json", import.meta.url));
if (existsSync(path) && !process.argv.includes("--force")) {
  console.error(
    `${path} exists: golden journals are written once per schema version. Pass --force only with a schema version bump.`,
  );
  process.exit(1);
}
const golden = await writeGoldenAgentJournal(path);
console.log(`wrote ${path}: ${golden.records.length} records, schema ${golden.schema}`);
