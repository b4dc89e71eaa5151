// Campaign 1: a crash at every write point, with real processes. A child runs a small agent on
// fsStores; at write point k (every fsync, directory fsync, write and rename of the fs adapter, and
// every side effect of the tool) it stops and the parent SIGKILLs it; a new process resumes. For
// every k: the run ends with the uninterrupted run's output and journal, every acknowledged record
// is there byte for byte, seqs are contiguous, and each tool side effect (keyed by its idempotency
// key) was applied at most twice and exactly once after dedupe.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STEP_COMPLETED } from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import { prng } from "../support/workload.js";
import {
  buildChild,
  cases,
  contiguous,
  duplicateOutcomes,
  EXECUTION_ID,
  linesOf,
  pool,
  removeTempDirs,
  runChild,
  SOAK,
  sideEffects,
  spawnChild,
  tempDir,
  timeout,
  withoutTime,
} from "./support.js";

const TURNS = 3;
const PARALLEL = 3;

beforeAll(() => buildChild("agent.ts").then(() => undefined));
afterAll(removeTempDirs);

interface Run {
  dir: string;
  side: string;
}

interface Outcome {
  stdout: string;
  /** The write point the child stopped at, e.g. "17 write executions/x72756e/log"; undefined when it ran to the end. */
  crashedAt?: string;
  acked: StoredRecord[];
  result?: unknown;
  log?: StoredRecord[];
}

async function go(run: Run, crashAt?: number): Promise<Outcome> {
  const child = await spawnChild("agent.ts", [
    JSON.stringify({ dir: run.dir, side: run.side, turns: TURNS, ...(crashAt ? { crashAt } : {}) }),
  ]);
  const { stdout, stderr, code } = await runChild(child, { killWhen: (line) => line.startsWith("crash ") });
  const crashedAt = linesOf(stdout, "crash")[0];
  if (!crashedAt && code !== 0)
    throw new Error(`child exited ${code}: ${stdout.slice(-1_500)} ${stderr.slice(-1_500)}`);
  const result = linesOf(stdout, "result")[0];
  const log = linesOf(stdout, "log")[0];
  return {
    stdout,
    ...(crashedAt ? { crashedAt } : {}),
    acked: linesOf(stdout, "ack").flatMap((line) => JSON.parse(line) as StoredRecord[]),
    ...(result === undefined ? {} : { result: JSON.parse(result) }),
    ...(log === undefined ? {} : { log: JSON.parse(log) as StoredRecord[] }),
  };
}

async function freshRun(label: string): Promise<Run> {
  const dir = await tempDir(label);
  return { dir: join(dir, "journal"), side: join(dir, "side-effects") };
}

const toolKeys = (log: StoredRecord[]) =>
  log
    .filter((r) => r.type === STEP_COMPLETED && /:tool:/.test(r.stepId as string))
    .map((r) => `${EXECUTION_ID}/${r.stepId as string}`);

/** Every check of one crashed-and-resumed run; returns the keys whose side effect was applied twice. */
async function check(
  label: string,
  baseline: Outcome,
  crashed: Outcome[],
  resumed: Outcome,
  run: Run,
): Promise<string[]> {
  expect(resumed.result, `${label}: output`).toEqual(baseline.result);
  const log = resumed.log!;
  expect(contiguous(log), `${label}: seqs contiguous`).toBe(true);
  expect(duplicateOutcomes(log), `${label}: outcomes recorded once`).toEqual([]);
  expect(withoutTime(log), `${label}: journal`).toEqual(withoutTime(baseline.log!));
  for (const outcome of crashed) {
    for (const record of outcome.acked) {
      expect(
        JSON.stringify(log[record.seq - 1]),
        `${label}: acknowledged seq ${record.seq} survives byte for byte`,
      ).toBe(JSON.stringify(record));
    }
  }
  const applied = await sideEffects(run.side);
  const keys = toolKeys(log);
  expect([...applied.keys()].sort(), `${label}: side effects after dedupe`).toEqual([...keys].sort());
  const twice = [...applied].filter(([, n]) => n > 1).map(([key]) => key);
  for (const [key, n] of applied) expect(n, `${label}: ${key} applied`).toBeLessThanOrEqual(crashed.length + 1);
  return twice;
}

describe("SIGKILL at every write point, resume in a new process", () => {
  it(
    "ends every run with the uninterrupted output, every ack kept, side effects exactly once after dedupe",
    async () => {
      const base = await freshRun("base");
      const baseline = await go(base);
      expect(baseline.result).toMatchObject({ text: `Done after ${TURNS} turns.`, turns: TURNS });
      const points = linesOf(baseline.stdout, "point");
      const total = points.length;
      expect(total).toBeGreaterThan(20);
      expect([...(await sideEffects(base.side)).values()]).toEqual(Array(TURNS - 1).fill(1));

      const ks = Array.from({ length: total + 1 }, (_, i) => i + 1); // total + 1: past the last point (no crash)
      const rows = await pool(ks, PARALLEL, async (k) => {
        const run = await freshRun(`k${k}`);
        const crashed = await go(run, k);
        const resumed = await go(run);
        const twice = await check(
          `crash at write point ${k} (${crashed.crashedAt ?? "none"})`,
          baseline,
          [crashed],
          resumed,
          run,
        );
        return { k, at: crashed.crashedAt, acked: crashed.acked.length, twice };
      });
      const crashedRuns = rows.filter((r) => r.at !== undefined);
      expect(crashedRuns.length).toBeGreaterThanOrEqual(total - 2); // a snapshot write may race past the last point
      const doubled = rows.filter((r) => r.twice.length > 0);
      // A crash after a side effect and before its outcome is durable re-runs the tool: applied twice, deduped.
      expect(doubled.length).toBeGreaterThan(0);
      console.info(
        `[campaign 1] ${total} write points, ${crashedRuns.length} SIGKILLs + resumes; ` +
          `${doubled.length} runs applied a side effect twice (deduped by key); ops: ${[...new Set(points.map((p) => p.split(" ")[1]))].join(", ")}`,
      );
    },
    timeout(150_000, 3_600_000),
  );

  it(
    "survives a second SIGKILL during the resume (double crashes)",
    async () => {
      const base = await freshRun("base2");
      const baseline = await go(base);
      const total = linesOf(baseline.stdout, "point").length;
      const random = prng(Number(process.env.LOOMWORK_SEED ?? 1));
      const pairs = Array.from(
        { length: cases("DOUBLE_CRASHES", 6, 200) },
        () => [1 + Math.floor(random() * total), 1 + Math.floor(random() * total)] as const,
      );
      const rows = await pool(pairs, PARALLEL, async ([k, j]) => {
        const run = await freshRun(`k${k}j${j}`);
        const first = await go(run, k);
        const second = await go(run, j);
        const resumed = await go(run);
        await check(
          `crash at ${k} (${first.crashedAt}), then at ${j} of the resume (${second.crashedAt ?? "none"})`,
          baseline,
          [first, second],
          resumed,
          run,
        );
        return { k, j };
      });
      expect(rows).toHaveLength(pairs.length);
      if (SOAK) console.info(`[campaign 1] ${pairs.length} double crashes held`);
    },
    timeout(60_000, 3_600_000),
  );
});
