// Measurement: the agent in real Chromium on a persistent profile (issue 18). The system's Chromium
// (/usr/bin/chromium through playwright-core, never a downloaded browser) on a user data directory on
// disk, so IndexedDB is where a user's browser keeps it (an incognito context keeps it in memory).
// bench/browser/page is built with Vite and served on 127.0.0.1; in that one page, interleaved:
//  - per turn: the workload's agent run on memory, on IndexedDB, and the floor of its durability (the
//    same count of strict-durability readwrite transactions with the same values, bare, in the same page);
//  - resume after a real page reload against a raw read (after its own reload) of what that resume read.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { build } from "vite";
import { serveStatic } from "../stories/browser-offline/serve.js";
import { launchProfile } from "../spec/browser/chromium.js";
import type { BenchPage } from "./browser/page/main.js";
import { median } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { bytes, ratio, type Goal, type Section } from "./report.js";

const PAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), "browser", "page");

declare global {
  interface Window {
    bench: BenchPage;
  }
}

async function load(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => window.bench?.ready === true);
}

interface TurnRow {
  turns: number;
  memoryMs: number;
  indexedDbMs: number;
  floorMs: number;
  writes: number;
  appends: number;
  values: number;
  bytes: number;
}

async function perTurn(page: Page, turns: number, reps: number, warmup: number): Promise<TurnRow> {
  const memory: number[] = [];
  const idb: number[] = [];
  const floor: number[] = [];
  let shape = { writes: 0, appends: 0, values: 0, bytes: 0 };
  for (let i = 0; i < warmup + reps; i++) {
    const m = await page.evaluate(([t, db]) => window.bench.run("memory", t, db), [turns, `m-${turns}-${i}`] as const);
    const r = await page.evaluate(([t, db]) => window.bench.run("indexeddb", t, db), [
      turns,
      `run-${turns}-${i}`,
    ] as const);
    const f = await page.evaluate((db) => window.bench.floor(db), `floor-${turns}-${i}`);
    if (i < warmup) continue;
    memory.push(m.ms);
    idb.push(r.ms);
    floor.push(f.ms);
    shape = { writes: r.writes, appends: r.appends, values: r.values, bytes: r.bytes };
  }
  return { turns, memoryMs: median(memory), indexedDbMs: median(idb), floorMs: median(floor), ...shape };
}

interface ResumeRow {
  turns: number;
  /** In the page, from opening the stores to the cut-off call restarted. */
  resumeMs: number;
  /** In the page, from opening the database to the records read. */
  rawMs: number;
  /** From the reload (page.goto, in this process) to the resume or the raw read done. */
  resumeWithLoadMs: number;
  rawWithLoadMs: number;
  /** Phases of the in-page resume: opening the stores, and the snapshot and log reads it made. */
  openMs: number;
  readMs: number;
  /** The runtime's part before its first read (app, catalogue row, logic, writer lease); the rest of it follows the reads. */
  beforeReadsMs: number;
  /** Store calls of the last resume: count and summed ms. */
  calls: Record<string, { n: number; ms: number }>;
  records: number;
  ranges: string;
}

async function resumeAfterReload(page: Page, url: string, turns: number, reps: number): Promise<ResumeRow> {
  const db = `resume-${turns}`;
  await page.evaluate(([t, name]) => window.bench.interrupt(t, name), [turns, db] as const);
  const samples = {
    resume: [] as number[],
    raw: [] as number[],
    resumeWithLoad: [] as number[],
    rawWithLoad: [] as number[],
    open: [] as number[],
    read: [] as number[],
    beforeReads: [] as number[],
  };
  let read = { reads: [] as { fromSeq: number }[], snapshotSeq: undefined as number | undefined, records: 0 };
  let calls: Record<string, { n: number; ms: number }> = {};
  for (let i = 0; i < reps + 1; i++) {
    // Each timed load starts from about:blank, so neither pays for tearing down the page before it.
    await page.goto("about:blank");
    const r0 = performance.now();
    await load(page, url);
    const resumed = await page.evaluate(([t, name]) => window.bench.resume(t, name), [turns, db] as const);
    const resumeWithLoad = performance.now() - r0;
    read = resumed;
    await page.goto("about:blank");
    const w0 = performance.now();
    await load(page, url);
    const raw = await page.evaluate(([name, ranges, snap]) => window.bench.rawRead(name, ranges, snap), [
      db,
      resumed.reads,
      resumed.snapshotSeq !== undefined,
    ] as const);
    const rawWithLoad = performance.now() - w0;
    if (i === 0) continue; // the first pair warms the HTTP cache of the page and the profile
    samples.resume.push(resumed.ms);
    samples.raw.push(raw.ms);
    samples.resumeWithLoad.push(resumeWithLoad);
    samples.rawWithLoad.push(rawWithLoad);
    samples.open.push(resumed.openMs);
    samples.read.push(resumed.readMs);
    samples.beforeReads.push(resumed.beforeReadsMs);
    calls = resumed.calls;
  }
  return {
    turns,
    resumeMs: median(samples.resume),
    rawMs: median(samples.raw),
    resumeWithLoadMs: median(samples.resumeWithLoad),
    rawWithLoadMs: median(samples.rawWithLoad),
    openMs: median(samples.open),
    readMs: median(samples.read),
    beforeReadsMs: median(samples.beforeReads),
    calls,
    records: read.records,
    ranges: `snapshot ${read.snapshotSeq === undefined ? "none" : `at seq ${read.snapshotSeq}`}; read from seq ${read.reads.map((r) => r.fromSeq).join(", ") || "-"}`,
  };
}

interface CatalogueRow {
  executions: number;
  listMs: number;
  floorMs: number;
}

async function catalogueInChromium(page: Page, executions: number, reps: number): Promise<CatalogueRow> {
  const db = `catalogue-${executions}`;
  await page.evaluate(([name, n]) => window.bench.seedCatalogue(name, n), [db, executions] as const);
  const list: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < reps + 1; i++) {
    const order = i % 2 === 0 ? (["list", "floor"] as const) : (["floor", "list"] as const);
    for (const variant of order) {
      const r = await page.evaluate(
        ([name, v]) => (v === "list" ? window.bench.openAndList(name) : window.bench.readCatalogue(name)),
        [db, variant] as const,
      );
      if (r.executions !== executions) throw new Error(`${variant} saw ${r.executions} of ${executions} executions`);
      if (i > 0) (variant === "list" ? list : floor).push(r.ms);
    }
  }
  return { executions, listMs: median(list), floorMs: median(floor) };
}

export async function measureBrowser(options: BenchOptions): Promise<Section> {
  const quick = options.mode === "quick";
  const turnCounts = quick ? [8] : [200];
  const resumeTurns = quick ? [8] : [200, 1000];
  const reps = quick ? 1 : 5;
  const outDir = await mkdtemp(join(tmpdir(), "loomwork-bench-page-"));
  const profileDir = await mkdtemp(join(tmpdir(), "loomwork-bench-profile-"));
  let context: BrowserContext | undefined;
  const server = await (async () => {
    await build({
      root: PAGE_ROOT,
      configFile: false,
      logLevel: "silent",
      build: { outDir, emptyOutDir: true, target: "es2022", reportCompressedSize: false },
    });
    return serveStatic(outDir);
  })();
  try {
    context = await launchProfile(profileDir);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    const url = `${server.url}index.html`;
    await load(page, url);
    const turnRows: TurnRow[] = [];
    for (const turns of turnCounts) turnRows.push(await perTurn(page, turns, reps, quick ? 0 : 1));
    const resumeRows: ResumeRow[] = [];
    for (const turns of resumeTurns) resumeRows.push(await resumeAfterReload(page, url, turns, reps));
    const catalogueRows: CatalogueRow[] = [];
    for (const n of quick ? [100, 200] : [1_000, 10_000])
      catalogueRows.push(await catalogueInChromium(page, n, quick ? 1 : 9));
    if (errors.length > 0) throw new Error(`the bench page threw: ${errors.join("; ")}`);
    return render(turnRows, resumeRows, catalogueRows, reps);
  } finally {
    await context?.close().catch(() => undefined);
    await server.close();
    await Promise.all([rm(outDir, { recursive: true, force: true }), rm(profileDir, { recursive: true, force: true })]);
  }
}

function render(turnRows: TurnRow[], resumeRows: ResumeRow[], catalogueRows: CatalogueRow[], reps: number): Section {
  const goals: Goal[] = [];
  const [small, large] = [catalogueRows[0]!, catalogueRows[catalogueRows.length - 1]!];
  const perExecution = (r: CatalogueRow) => r.listMs / r.executions / (small.listMs / small.executions);
  goals.push(
    {
      goal: `Chromium: open + list ${large.executions.toLocaleString("en-US")} executions ≤ 3x reading the catalogue`,
      met: large.listMs <= 3 * large.floorMs,
      detail: ratio(large.listMs / large.floorMs),
    },
    {
      goal: `Chromium: open + list linear in executions (per execution at ${large.executions.toLocaleString("en-US")} ≤ 1.5x that at ${small.executions.toLocaleString("en-US")})`,
      met: perExecution(large) <= 1.5,
      detail: `${ratio(perExecution(large))} per execution`,
    },
  );
  for (const r of turnRows) {
    const bound = r.memoryMs + r.floorMs;
    goals.push({
      goal: `Chromium, ${r.turns} turns: IndexedDB run ≤ 2x (memory run + floor of its durability)`,
      met: r.indexedDbMs <= 2 * bound,
      detail: `IndexedDB ${ratio(r.indexedDbMs / bound)} of memory + floor (IndexedDB ${ratio(r.indexedDbMs / r.memoryMs)} of memory; floor ${ratio(r.floorMs / r.memoryMs)} of memory)`,
    });
  }
  for (const r of resumeRows) {
    goals.push({
      goal: `Chromium, ${r.turns} turns: resume after a real reload ≤ 1.3x a raw read of the same records after one (reload included)`,
      met: r.resumeWithLoadMs <= 1.3 * r.rawWithLoadMs,
      detail: `${ratio(r.resumeWithLoadMs / r.rawWithLoadMs)} with the reload; in the page alone ${ratio(r.resumeMs / r.rawMs)} (${r.records} records; ${r.ranges})`,
    });
  }
  return {
    id: "browser",
    title: "The agent in Chromium on a persistent profile",
    method: [
      "Debian's Chromium (headless, through playwright-core) on a persistent profile in a temporary directory: IndexedDB on disk. One page (bench/browser/page, built with Vite, served on 127.0.0.1).",
      `Per turn: the bench workload's agent (agentLoop$, scripted model, 1.5-4 kB of tool output per turn, claim-check off) on memory and on IndexedDB, and the floor: every write transaction that IndexedDB run committed (appends, snapshots, blobs), replayed bare as one strict-durability readwrite transaction each with the same values, in a database of its own. Interleaved, ${reps} rounds after a warm-up, medians.`,
      `Resume: the run cut off at its last tool call, then ${reps} times (after a warm-up pair): load the page (from about:blank), open the stores and resume until the cut-off call restarts; load it again, read the same records raw (one readonly transaction: the catalogue row, the snapshot if resume read one, and getAll over each key range resume read; a snapshot row that holds its state as JSON text, schema version 2, is JSON.parse'd, as a structured value is deserialised by the read itself). Medians.`,
    ],
    tables: [
      {
        caption: "Per turn, in one page (ratios of medians)",
        head: [
          "turns",
          "IndexedDB / memory",
          "floor / memory",
          "IndexedDB / (memory + floor)",
          "write transactions",
          "of them appends",
          "per turn",
          "values written",
          "bytes written (JSON / blob)",
        ],
        rows: turnRows.map((r) => [
          r.turns,
          ratio(r.indexedDbMs / r.memoryMs),
          ratio(r.floorMs / r.memoryMs),
          ratio(r.indexedDbMs / (r.memoryMs + r.floorMs)),
          r.writes,
          r.appends,
          (r.writes / r.turns).toFixed(2),
          r.values,
          bytes(r.bytes),
        ]),
      },
      {
        caption: "Resume after a real reload vs a raw read of the same records",
        head: [
          "turns",
          "reload + resume / reload + raw read",
          "in the page: resume / raw read",
          "records read",
          "what resume read",
        ],
        rows: resumeRows.map((r) => [
          r.turns,
          ratio(r.resumeWithLoadMs / r.rawWithLoadMs),
          ratio(r.resumeMs / r.rawMs),
          r.records,
          r.ranges,
        ]),
        align: ["r", "r", "r", "r", "l"],
      },
      {
        caption:
          "Phases of the in-page resume, as multiples of the raw read (IndexedDB reads are the adapter's, timed around its calls; the runtime before them: the app, the catalogue row, the logic and the writer lease; after them: restoring the snapshot, replaying the tail and restarting the call, in code the fresh page runs for the first time)",
        head: [
          "turns",
          "opening the stores",
          "runtime before the reads",
          "snapshot + log reads",
          "runtime after the reads",
          "whole resume",
        ],
        rows: resumeRows.map((r) => [
          r.turns,
          ratio(r.openMs / r.rawMs),
          ratio(r.beforeReadsMs / r.rawMs),
          ratio(r.readMs / r.rawMs),
          ratio((r.resumeMs - r.openMs - r.beforeReadsMs - r.readMs) / r.rawMs),
          ratio(r.resumeMs / r.rawMs),
        ]),
      },
      {
        caption:
          "Opening the stores and listing every execution vs a bare open and getAll of the catalogue (seeded in one transaction, two records per execution)",
        head: ["executions", "open + list / floor", "per execution, relative to the smallest row"],
        rows: catalogueRows.map((r) => [r.executions, ratio(r.listMs / r.floorMs), ratio(perExecution(r))]),
      },
    ],
    goals,
    notes: resumeRows.map(
      (r) =>
        `Store calls of a resume at ${r.turns} turns (count, summed time as a multiple of the raw read): ` +
        Object.entries(r.calls)
          .sort((a, b) => b[1].ms - a[1].ms)
          .map(([name, c]) => `\`${name}\` ×${c.n} ${ratio(c.ms / r.rawMs)}`)
          .join(", ") +
        `; the reads timed apart (snapshot + log) ${ratio(r.readMs / r.rawMs)}.`,
    ),
    raw: { turnRows, resumeRows, catalogueRows },
  };
}
