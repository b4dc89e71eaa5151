// Runs the sweep and the erase coordinator on stores that hold the sweep data (bench/sweepData.ts) and
// reports their times, peak memory and fsyncs: in-process for memory stores, in a heap-capped fresh
// process for fs (bench/child/sweepFs.ts), through loomwork/lifecycle's sweep(app) and eraseSubject(app, s).
import { createApp } from "../actors/app.js";
import { eraseSubject, sweep } from "../lifecycle.js";
import type { Stores } from "../stores/types.js";
import { benchConfig } from "./agent.js";
import { median, peakMemory, timed } from "./measure.js";
import { subjectsToErase } from "./sweepData.js";

/** How many subjects are erased one after another (the median time is kept). */
export const ERASURES = 3;

export interface Run {
  ms: number;
  heap: number;
  rss: number;
  fsyncs?: number;
}

export interface MaintenanceReport {
  sweep?: Run & { result: Record<string, unknown> };
  /** One streamed `content.list()` pass after the sweep, for scale. */
  listMs?: number;
  /** Median time, largest peaks, fsyncs per erasure. */
  erase?: Run & { count: number; result: Record<string, unknown> };
  notMeasured?: string;
}

export async function runMaintenance(
  stores: Stores,
  executions: number,
  fsyncs: () => number = () => Number.NaN,
): Promise<MaintenanceReport> {
  const app = createApp({ ...benchConfig(stores, 1, "on, preview: false"), compliance: { erase: true } });
  try {
    let before = fsyncs();
    const s = await peakMemory(() => timed(() => sweep(app, { ttlMs: 0 })));
    const report: MaintenanceReport = {
      sweep: {
        ms: s.value.wall,
        heap: s.heapPeakDelta,
        rss: s.rssPeakDelta,
        fsyncs: fsyncs() - before,
        result: { ...s.value.value },
      },
    };
    report.listMs = (
      await timed(async () => {
        for await (const _ of stores.content.list());
      })
    ).wall;
    const runs: (Run & { result: Record<string, unknown> })[] = [];
    for (const subject of subjectsToErase(executions, ERASURES)) {
      before = fsyncs();
      const e = await peakMemory(() => timed(() => eraseSubject(app, subject)));
      runs.push({
        ms: e.value.wall,
        heap: e.heapPeakDelta,
        rss: e.rssPeakDelta,
        fsyncs: fsyncs() - before,
        result: { ...e.value.value },
      });
    }
    report.erase = {
      ms: median(runs.map((r) => r.ms)),
      heap: Math.max(...runs.map((r) => r.heap)),
      rss: Math.max(...runs.map((r) => r.rss)),
      fsyncs: median(runs.map((r) => r.fsyncs!)),
      count: runs.length,
      result: runs[0]!.result,
    };
    return report;
  } catch (error) {
    return { notMeasured: `threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}` };
  } finally {
    await app.close();
  }
}
