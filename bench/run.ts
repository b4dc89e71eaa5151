// npm run bench [-- --quick | --full] [--only sizes,resume,...] [--out <file>] [--json <file>]
// Prints each measurement's tables as it finishes and rewrites docs/performance.md (a --quick run
// writes only where --out says, so CI never replaces the measured figures).
import { readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { fullBlockOf, runBench } from "./suite.js";
import type { Mode } from "./options.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    full: { type: "boolean", default: false },
    only: { type: "string" },
    out: { type: "string" },
    json: { type: "string" },
  },
});

if (values.quick && values.full) {
  console.error("bench: --quick and --full exclude each other.");
  process.exit(2);
}
const mode: Mode = values.quick ? "quick" : values.full ? "full" : "default";
const only = values.only
  ?.split(",")
  .map((s) => s.trim())
  .filter(Boolean);
const out = values.out ?? (mode === "quick" || only ? undefined : "docs/performance.md");
const command = ["npm run bench", ...(process.argv.length > 2 ? ["--", ...process.argv.slice(2)] : [])].join(" ");

// A run that is not --full keeps the rows the last --full run wrote (1,000 turns, 100k blobs).
const previous = out ? await readFile(out, "utf8").catch(() => "") : "";
const previousFullBlock = fullBlockOf(previous);

const run = await runBench({
  mode,
  command,
  ...(previousFullBlock ? { previousFullBlock } : {}),
  ...(only ? { only } : {}),
  onProgress: (message) => console.error(message),
  onSection: (section, markdown) => console.log(`${markdown}\n\n(${section.id}: done)\n`),
});
for (const s of run.sections) console.error(`${s.id}: ${s.seconds.toFixed(1)} s${s.error ? " (FAILED)" : ""}`);
if (out) {
  await writeFile(out, run.markdown);
  console.error(`wrote ${out}`);
}
if (values.json)
  await writeFile(values.json, JSON.stringify({ machine: run.machine, mode, sections: run.sections }, null, 2));
process.exit(run.sections.some((s) => s.error) ? 1 : 0);
