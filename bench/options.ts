// Run sizes. The default run takes a few minutes; --quick (CI) proves every measurement still runs
// in seconds; --full adds the 1,000-turn rows and the 100k-blob sweep (the `full*` lists), which are
// rendered in their own block of docs/performance.md and kept there by later default runs.
export type Mode = "quick" | "default" | "full";

export interface SweepScale {
  blobs: number;
  executions: number;
}

export interface BenchOptions {
  mode: Mode;
  /** Turn counts of the size table (measurement 1), and those only --full adds. */
  sizeTurns: number[];
  fullSizeTurns: number[];
  /** Turn counts resumed (measurement 2), and those only --full adds. */
  resumeTurns: number[];
  fullResumeTurns: number[];
  /** Repetitions of each timed variant that costs a fresh process or a whole agent run (medians are kept). */
  reps: number;
  /** Repetitions of in-process variants, cheaper than a fresh process each, so more of them (medians). */
  inProcessReps: number;
  /** Unrecorded rounds before them (JIT, caches, the tsx transform cache of the child processes). */
  warmup: number;
  /** Turns of the overhead and LangGraph runs (200 in the issue). */
  compareTurns: number;
  /** Repetitions of the LangGraph comparison (its MessagesAnnotation runs take seconds each). */
  langGraphReps: number;
  throughput: { executions: number; appendsEach: number; reps: number };
  /** Sweep / erase scales: total blobs over executions (10 cited blobs per execution), and those only --full adds. */
  sweepScales: SweepScale[];
  fullSweepScales: SweepScale[];
  /** Stores the sweep data is generated on. */
  sweepStores: ("memory" | "fs")[];
}

export function benchOptions(mode: Mode): BenchOptions {
  // --quick: the smallest run that still exercises every row (a smoke test of the bench, not figures).
  const quick = mode === "quick";
  const full = mode === "full";
  return {
    mode,
    sizeTurns: quick ? [4, 8] : [50, 200, 450],
    fullSizeTurns: full ? [1000] : [],
    resumeTurns: quick ? [8] : [200],
    fullResumeTurns: full ? [1000] : [],
    reps: quick ? 1 : 7,
    inProcessReps: quick ? 1 : 15,
    warmup: quick ? 0 : 1,
    compareTurns: quick ? 8 : 200,
    langGraphReps: quick ? 1 : 5,
    throughput: quick ? { executions: 4, appendsEach: 4, reps: 1 } : { executions: 64, appendsEach: 32, reps: 3 },
    sweepScales: quick
      ? [
          { blobs: 50, executions: 5 },
          { blobs: 100, executions: 10 },
        ]
      : [
          { blobs: 1_000, executions: 100 },
          { blobs: 10_000, executions: 1_000 },
        ],
    fullSweepScales: full ? [{ blobs: 100_000, executions: 10_000 }] : [],
    sweepStores: ["memory", "fs"],
  };
}
