// Measurement 7: retained heap per finished execution (issue 13). Each row is fresh `node --expose-gc`
// processes (bench/child/memory.ts), each running finished 30-turn agent executions in one app on fs stores and
// measures the heap after a full GC, V8's code space left out: with the app open, after `app.close()` with
// the app still referenced (as a long-lived desktop process keeps it), and once the app is let go; the
// app's share is the difference. spec/reliability/memory.test.ts asserts the same figures.
// The child runs with V8's bytecode flushing off (MEMORY_CHILD_FLAGS): with it on, every full GC may drop
// the bytecode of functions not run lately and the next call compiles it again, so the heap moved by tens
// of kB between two measurements with what code ran last, not with what the app holds (per cached
// outcome over 16 outcomes: -781 B, 497 B and 8,633 B in three runs of the same child; with it off, 293
// to 441 B). TurboFan is off too (`--no-opt`): what it compiles on its background thread, and keeps beside
// the code space, landed between two measurements or not, and moved a 150-execution child's open share
// by up to 245 kB (-234 kB to +245 kB in six runs of the same child, 1.6 kB per execution, over the
// 1 kB bound); with it off, -27 kB to +71 kB. Each row is the median of several children.
import type { MemoryArgs, MemoryReport } from "./child/memory.js";
import type { BenchOptions } from "./options.js";
import { bytes, type Cell, type Goal, type Section } from "./report.js";
import { runChild } from "./spawn.js";
import { DEFAULT_SETTLED_CACHE } from "../actors/config.js";

/** The bound per finished execution after close, and per cached outcome while open. */
const BOUND_BYTES = 1024;
const TURNS = 30;

/**
 * Node flags of the memory child: `gc()`, V8's bytecode kept (not flushed from functions a GC finds
 * idle), and no optimizing compiler, so the heap after a full GC does not move with which code ran last
 * or which optimized code a background compile finished in time. Like the code space it leaves out,
 * bytecode and optimized code are the process's compiled code, not what the app holds for its executions.
 */
export const MEMORY_CHILD_FLAGS = ["--expose-gc", "--no-flush-bytecode", "--no-opt"];

interface Row {
  settledCache: number;
  /** The child whose per-cached-outcome figure is the median of the samples. */
  report?: MemoryReport;
  /** Per cached outcome (open) in every child of the row. */
  samples: number[];
  error?: string;
}

const perCached = (r: MemoryReport, settledCache: number) =>
  (r.open - r.closed) / Math.max(1, Math.min(r.executions, settledCache));

const HEAD = [
  "execution.settledCache",
  "finished executions",
  "app's share, open",
  "per cached outcome (open)",
  "per cached outcome, each child",
  "app's share after close",
  "per execution after close",
  "whole heap per execution (fs stores' own catalogue included)",
  "app.result after close",
];

function cells(row: Row): Cell[] {
  const r = row.report;
  if (!r) return [row.settledCache, "", `not measured: ${row.error ?? "?"}`, "", "", "", "", "", ""];
  const open = r.open - r.appDropped;
  const closed = r.closed - r.appDropped;
  const cached = Math.min(r.executions, row.settledCache);
  const ok = r.closedResults.every((v) => (v as { turns?: number }).turns === TURNS);
  return [
    row.settledCache === DEFAULT_SETTLED_CACHE ? `${row.settledCache} (default)` : row.settledCache,
    r.executions,
    bytes(open),
    cached > 0 ? bytes((open - closed) / cached) : "n/a",
    cached > 0 ? row.samples.map((b) => `${Math.round(b).toLocaleString("en-US")} B`).join(", ") : "n/a",
    bytes(closed),
    bytes(closed / r.executions),
    bytes((r.storesClosed - r.before) / r.executions),
    ok ? "the output, from the journal" : `wrong: ${JSON.stringify(r.closedResults).slice(0, 80)}`,
  ];
}

export async function measureMemory(options: BenchOptions): Promise<Section> {
  const executions = options.mode === "quick" ? 12 : 300;
  const warmup = options.mode === "quick" ? 2 : 20;
  const children = options.mode === "quick" ? 1 : 3;
  const rows: Row[] = [];
  for (const settledCache of [DEFAULT_SETTLED_CACHE, 16]) {
    const args: MemoryArgs = { executions, turns: TURNS, warmup, concurrency: 8, settledCache };
    try {
      const reports: MemoryReport[] = [];
      for (let i = 0; i < children; i++)
        reports.push((await runChild("memory", args, MEMORY_CHILD_FLAGS)) as unknown as MemoryReport);
      reports.sort((a, b) => perCached(a, settledCache) - perCached(b, settledCache));
      rows.push({
        settledCache,
        report: reports[reports.length >> 1]!,
        samples: reports.map((r) => perCached(r, settledCache)),
      });
    } catch (error) {
      rows.push({ settledCache, samples: [], error: error instanceof Error ? error.message : String(error) });
    }
  }
  const measured = rows.filter((r) => r.report);
  const closedPer = measured.map((r) => (r.report!.closed - r.report!.appDropped) / r.report!.executions);
  const cachedPer = measured.map((r) => perCached(r.report!, r.settledCache));
  // What one more cached outcome costs: the open app's share between the two rows over the outcomes they
  // differ by. A row's own (open - closed) / cached also counts what close frees whatever the cache holds
  // (some 5-30 kB: over 16 outcomes, up to 1.8 kB each); the slope leaves it out. Falls back to the rows'
  // own figure when they cache the same number (a --quick run).
  const [big, small] = measured.length === 2 ? [measured[0]!, measured[1]!] : [undefined, undefined];
  const cachedOf = (r: Row) => Math.min(r.report!.executions, r.settledCache);
  const share = (r: Row) => r.report!.open - r.report!.appDropped;
  const slope =
    big && small && cachedOf(big) > cachedOf(small)
      ? (share(big) - share(small)) / (cachedOf(big) - cachedOf(small))
      : undefined;
  const beyond = small ? share(small) / small.report!.executions : undefined;
  const goals: Goal[] = [
    {
      goal: `under ${BOUND_BYTES.toLocaleString("en-US")} B retained per finished ${TURNS}-turn execution after app.close(), the app still referenced`,
      met: measured.length === rows.length ? closedPer.every((b) => b < BOUND_BYTES) : "not measured",
      detail: measured.length > 0 ? `largest: ${bytes(Math.max(...closedPer))} per execution` : (rows[0]?.error ?? ""),
    },
    {
      goal: `bounded while open by execution.settledCache: under ${BOUND_BYTES.toLocaleString("en-US")} B per cached outcome, nothing per execution beyond it`,
      met:
        measured.length !== rows.length
          ? "not measured"
          : slope !== undefined
            ? slope < BOUND_BYTES && beyond! < BOUND_BYTES
            : cachedPer.every((b) => b < BOUND_BYTES),
      detail:
        measured.length === 0
          ? (rows[0]?.error ?? "")
          : slope !== undefined
            ? `${bytes(slope)} per cached outcome (between the rows); the 16-outcome app's share, open, ${bytes(beyond!)} per execution; each row's own (open - closed) / cached: ${cachedPer.map((b) => `${Math.round(b).toLocaleString("en-US")} B`).join(", ")}`
            : `largest: ${bytes(Math.max(...cachedPer))} per cached outcome`,
    },
  ];
  return {
    id: "memory",
    title: "7. Retained heap per finished execution",
    method: [
      `Each row is the median (by the per-cached-outcome figure) of ${children} fresh \`node ${MEMORY_CHILD_FLAGS.join(" ")}\` processes (\`bench/child/memory.ts\`), each: ${warmup} warm-up executions in another app, then ${executions} ${TURNS}-turn executions of the harness (claim-check off, 8 at a time) ` +
        "run to their end in one app on fs stores (fsync made a no-op: durability is not measured here). The heap is `heapUsed` after a full GC, without V8's code space (compiled code grows as the JIT warms, whatever the app holds), with bytecode flushing off (else a GC drops the bytecode of functions idle lately and the next call compiles it again: the heap moved by tens of kB between measurements with which code ran last) and TurboFan off (what its background compiles keep beside the code space landed between two measurements or not: a 150-execution child's open share moved by up to 245 kB): " +
        "with the app open, after `app.close()` with the app and its stores still referenced, and after the app is let go. The app's share is the difference with the last figure; it includes what an app holds whatever it ran (its own objects, some 10-20 kB). " +
        "The whole-heap column is everything above the baseline after the stores are closed too, the fs stores' per-execution catalogue (paths, log state) included. " +
        "`spec/reliability/memory.test.ts` asserts the same bounds.",
    ],
    tables: [{ head: HEAD, rows: rows.map(cells) }],
    goals,
    notes: [
      "The per-cached-outcome goal is judged on the slope between the two rows (the open app's share over the outcomes they differ by) and on the 16-outcome app's open share per execution; a row's own (open - closed) / cached also counts what `app.close()` frees whatever the cache holds, divided over that row's cached outcomes.",
      "Before issue 13 the app kept every ended execution (its folded state: the whole transcript) until the app object itself was dropped: about 381 kB per finished 30-turn execution, open or closed (measured by the same child on the previous commit). " +
        "Now an execution is released when its outcome is settled; `app.result` answers from the last `execution.settledCache` outcomes, then from the journal.",
    ],
    raw: rows,
  };
}
