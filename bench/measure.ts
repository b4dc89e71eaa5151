// Timing helpers. Times are only ever reported as ratios of variants measured side by side in the
// same run: every repetition runs each variant once, in an order that rotates, and we keep medians.
import v8 from "node:v8";
import { performance } from "node:perf_hooks";
import vm from "node:vm";

/** The median of `values` (the mean of the two middle values for an even count). */
export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The nearest-rank percentile `p` (0-100) of `values`. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/**
 * One timing: wall-clock milliseconds and the process's CPU milliseconds (user + system) over the same span;
 * from `span()`, also `busy`: the milliseconds the main thread's event loop was active (not idle waiting for
 * I/O or a timer), as `performance.eventLoopUtilization` counts them.
 */
export interface Sample {
  wall: number;
  cpu: number;
  busy?: number;
}

/** Starts a span; calling the result ends it. */
export function span(): () => Sample {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  const loop = performance.eventLoopUtilization();
  return () => {
    const used = process.cpuUsage(cpu);
    const { active } = performance.eventLoopUtilization(loop);
    return { wall: performance.now() - wall, cpu: (used.user + used.system) / 1000, busy: active };
  };
}

/** Times `work` (wall and CPU). */
export async function timed<T>(work: () => Promise<T>): Promise<Sample & { value: T }> {
  const end = span();
  const value = await work();
  return { ...end(), value };
}

/** The median wall and CPU milliseconds of some samples. */
export function medianSample(samples: Sample[]): Sample {
  return { wall: median(samples.map((s) => s.wall)), cpu: median(samples.map((s) => s.cpu)) };
}

/** Ratios of two medians: wall clock and CPU time. */
export function ratioOf(a: Sample[], b: Sample[]): Sample {
  const [x, y] = [medianSample(a), medianSample(b)];
  return { wall: x.wall / y.wall, cpu: x.cpu / y.cpu };
}

/**
 * Runs every variant once per repetition, rotating which goes first, after `warmup` unrecorded rounds.
 * A variant returns the span it measured itself (so set-up stays outside), or anything else to be timed whole.
 * Resolves with the samples per variant name.
 */
export async function interleave(
  variants: Record<string, () => Promise<unknown>>,
  options: { reps: number; warmup?: number },
): Promise<Record<string, Sample[]>> {
  const names = Object.keys(variants);
  const samples: Record<string, Sample[]> = Object.fromEntries(names.map((n) => [n, []]));
  const warmup = options.warmup ?? 1;
  for (let round = 0; round < warmup + options.reps; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const name of order) {
      collectGarbage();
      const end = span();
      const result = await variants[name]!();
      const sample = isSample(result) ? result : end();
      if (round >= warmup) samples[name]!.push(sample);
    }
  }
  return samples;
}

const isSample = (value: unknown): value is Sample =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as Sample).wall === "number" &&
  typeof (value as Sample).cpu === "number";

let gc: (() => void) | undefined | null = null;
/** A full GC between samples, so one variant does not pay for the garbage of another. */
export function collectGarbage(): void {
  if (gc === null) {
    try {
      v8.setFlagsFromString("--expose-gc");
      gc = vm.runInNewContext("gc") as () => void;
    } catch {
      gc = undefined;
    }
  }
  gc?.();
}

/** Samples heapUsed and rss every `everyMs` while `work` runs; peaks are above the baseline taken first. */
export async function peakMemory<T>(
  work: () => Promise<T>,
  everyMs = 5,
): Promise<{ value: T; heapPeakDelta: number; rssPeakDelta: number; samples: number }> {
  collectGarbage();
  const base = process.memoryUsage();
  let heapPeak = base.heapUsed;
  let rssPeak = base.rss;
  let samples = 0;
  const sample = () => {
    const now = process.memoryUsage();
    heapPeak = Math.max(heapPeak, now.heapUsed);
    rssPeak = Math.max(rssPeak, now.rss);
    samples++;
  };
  const timer = setInterval(sample, everyMs);
  try {
    const value = await work();
    sample();
    return { value, heapPeakDelta: heapPeak - base.heapUsed, rssPeakDelta: rssPeak - base.rss, samples };
  } finally {
    clearInterval(timer);
  }
}
