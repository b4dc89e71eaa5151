// Measurement: bytes at rest with and without compression (fsStores({ compression: "deflate" })), the same
// agent run written twice to fs, claim-check off and on; beside Loom's figure for its state under zstd.
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { fsStores } from "../adapters/fs/index.js";
import type { Compression } from "../stores/compression.js";
import { EXECUTION_ID, runAgent, type ClaimCheckMode } from "./agent.js";
import type { BenchOptions } from "./options.js";
import { bytes, ratio, type Section, type Table } from "./report.js";
import { diskUsage, type DiskUsage } from "./storeBytes.js";
import { tempDir } from "./stores.js";

/** Loom's own figure: its state compresses 8.7x under zstd. */
const LOOM_ZSTD_STATE_RATIO = 8.7;
const MODES: ClaimCheckMode[] = ["off", "on"];

interface Measured {
  journal: DiskUsage;
  content: DiskUsage;
  snapshot: number;
  log: number;
}

async function written(turns: number, mode: ClaimCheckMode, compression: Compression): Promise<Measured> {
  const dir = await tempDir(`bytes-${compression}`);
  const stores = await fsStores({ dir, compression });
  const { app } = await runAgent(stores, turns, mode);
  await app.close();
  await stores.close();
  const execution = join(dir, "executions");
  const journal = await diskUsage(dir, ["content"]);
  const [name] = await readdir(execution);
  const sizeOf = async (file: string) => (await stat(join(execution, name!, file)).catch(() => ({ size: 0 }))).size;
  return {
    journal,
    content: await diskUsage(join(dir, "content")),
    snapshot: await sizeOf("snapshot"),
    log: await sizeOf("log"),
  };
}

export async function measureCompression(options: BenchOptions): Promise<Section> {
  const turns = options.compareTurns;
  const rows: { mode: ClaimCheckMode; plain: Measured; packed: Measured }[] = [];
  for (const mode of MODES)
    rows.push({ mode, plain: await written(turns, mode, "none"), packed: await written(turns, mode, "deflate") });
  const cells = (part: (m: Measured) => number) => (r: (typeof rows)[number]) => [
    bytes(part(r.plain)),
    bytes(part(r.packed)),
    ratio(part(r.plain) / part(r.packed)),
  ];
  const table: Table = {
    head: [
      "claim-check",
      "turns",
      "log: plain",
      "log: deflate",
      "ratio",
      "snapshot: plain",
      "snapshot: deflate",
      "ratio",
      "blobs: plain",
      "blobs: deflate",
      "ratio",
      "whole directory: plain",
      "deflate",
      "ratio",
    ],
    rows: rows.map((r) => [
      r.mode,
      turns,
      ...cells((m) => m.log)(r),
      ...cells((m) => m.snapshot)(r),
      ...(r.plain.content.apparent > 0 && r.plain.content.files > 1
        ? cells((m) => m.content.apparent)(r)
        : ["(none)", "", ""]),
      ...cells((m) => m.journal.apparent + m.content.apparent)(r),
    ]),
  };
  return {
    id: "compression",
    title: "12. Bytes at rest with compression",
    method: [
      `The ${turns}-turn agent run written to a fresh fs directory twice, with \`fsStores({ compression: "none" })\` (the default) and \`"deflate"\` (log batch frames, snapshots, segments and blobs; each stored compressed only when smaller). ` +
        "Exact file sizes (apparent bytes); the content store's clock file counts in the blobs column. Loom reports its state at " +
        `${LOOM_ZSTD_STATE_RATIO}x under zstd; deflate is what CompressionStream offers in every browser and in Node.`,
    ],
    tables: [table],
    goals: [],
    notes: [
      `Snapshot ratio beside Loom's ${LOOM_ZSTD_STATE_RATIO}x for its state under zstd: ${rows.map((r) => `${ratio(r.plain.snapshot / r.packed.snapshot)} (claim-check ${r.mode})`).join(", ")}.`,
    ],
    raw: { rows, executionId: EXECUTION_ID },
  };
}
