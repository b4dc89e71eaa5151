// Measurement 3: journaling overhead. The same agent machine and the same effects, run journaled on the
// memory store and as a plain XState actor (createActor, the effects provided as fromPromise actors that
// resolve at once), interleaved. Two more journaled variants break the overhead down.
import { createActor, fromPromise, toPromise, type AnyStateMachine } from "xstate";
import { createApp } from "../actors/app.js";
import type { Effect, EffectContext } from "../actors/effects/effect.js";
import { LOOM_STEP } from "../machines/helpers/effectActor.js";
import { memoryStores } from "../stores/memory.js";
import type { Stores } from "../stores/types.js";
import { workloadEffects } from "../spec/support/workload.js";
import { benchConfig, benchLoop, EXECUTION_ID } from "./agent.js";
import { collectGarbage, interleave, ratioOf, span, type Sample } from "./measure.js";
import { addBuckets, profileBuckets } from "./profile.js";
import type { BenchOptions } from "./options.js";
import { ratio, ratios, type Section } from "./report.js";

const GOAL = 1.5;

/** The agent run as a plain XState actor: no journal, no effect chain; each effect called directly. */
export async function runPlain(turns: number): Promise<Sample> {
  const { effects } = workloadEffects(turns);
  const asActor = (effectId: string, effect: Effect) =>
    fromPromise(({ input }: { input: { [LOOM_STEP]: string; input: unknown } }) => {
      const ctx: EffectContext = {
        executionId: "plain",
        stepId: `harness#${input[LOOM_STEP]}`,
        effectId,
        taskKind: effect.kind,
        attempt: 1,
        idempotencyKey: `plain/${input[LOOM_STEP]}`,
        signal: new AbortController().signal,
      };
      return effect.run(input.input, ctx);
    });
  const machine = (benchLoop(turns) as AnyStateMachine).provide({
    actors: { model: asActor("model", effects.model!), search: asActor("search", effects.search!) },
  });
  const end = span();
  const actor = createActor(machine, { input: { prompt: "research" } });
  actor.start();
  await toPromise(actor);
  return end();
}

/**
 * One journaled run of the bench agent on `stores`, timed from app.start to its result (bench/overheadFs.ts runs it on fs).
 * `onSpan` is told when the timed span starts and ends (overheadFs captures the disk operations of that span only).
 */
export async function runJournaled(
  turns: number,
  stores: Stores,
  snapshotEvery?: false,
  onSpan?: (edge: "start" | "end") => void,
): Promise<Sample> {
  const config = benchConfig(stores, turns, "off");
  const app = createApp(
    snapshotEvery === false ? { ...config, execution: { ...config.execution, snapshotEvery: false } } : config,
  );
  onSpan?.("start");
  const end = span();
  await app.start(benchLoop(turns), { executionId: EXECUTION_ID, input: { prompt: "research" } });
  await app.result(EXECUTION_ID);
  const sample = end();
  onSpan?.("end");
  await app.close();
  return sample;
}

export async function measureOverhead(options: BenchOptions): Promise<Section> {
  const turns = options.compareTurns;
  const samples = await interleave(
    {
      plain: () => runPlain(turns),
      journaled: () => runJournaled(turns, memoryStores()),
      noSnapshots: () => runJournaled(turns, memoryStores(), false),
    },
    { reps: options.inProcessReps, warmup: options.warmup },
  );
  // Where the time goes: CPU profiles of both runs, self time by module, in units of the plain run's total.
  const profiles = { plain: {} as Record<string, number>, journaled: {} as Record<string, number> };
  for (let i = 0; i < Math.max(1, Math.min(3, options.reps)); i++) {
    collectGarbage();
    addBuckets(profiles.plain, await profileBuckets(() => runPlain(turns)));
    collectGarbage();
    addBuckets(profiles.journaled, await profileBuckets(() => runJournaled(turns, memoryStores())));
  }
  const plainTotal = Object.values(profiles.plain).reduce((a, b) => a + b, 0);
  const buckets = [...new Set([...Object.keys(profiles.plain), ...Object.keys(profiles.journaled)])]
    .map((name) => ({
      name,
      plain: (profiles.plain[name] ?? 0) / plainTotal,
      journaled: (profiles.journaled[name] ?? 0) / plainTotal,
    }))
    .sort((a, b) => b.journaled - b.plain - (a.journaled - a.plain));
  const top = buckets.slice(0, 10);
  const rest = buckets
    .slice(10)
    .reduce(
      (acc, b) => ({ name: "everything else", plain: acc.plain + b.plain, journaled: acc.journaled + b.journaled }),
      { name: "everything else", plain: 0, journaled: 0 },
    );
  const overhead = ratioOf(samples.journaled!, samples.plain!);
  const noSnapshots = ratioOf(samples.noSnapshots!, samples.plain!);
  const snapshotShare = `${Math.max(0, (100 * (overhead.wall - noSnapshots.wall)) / (overhead.wall - 1)).toFixed(0)}%`;
  return {
    id: "overhead",
    title: "3. Journaling overhead",
    method: [
      `${turns} turns of the harness, claim-check off. \`plain\`: \`createActor(machine.provide({ actors }))\`, each effect a \`fromPromise\` that calls the same effect function (it resolves at once). ` +
        `\`journaled\`: \`app.start\` on \`memoryStores()\` (write-ahead records, TRANSITION records, the effect chain machine per call, snapshots every 64 records). ` +
        `${options.inProcessReps} repetitions, interleaved, medians of wall-clock and of CPU time (the CPU ratio is the check on a busy machine).`,
    ],
    tables: [
      {
        head: ["variant", "time / plain XState (median wall; CPU)", "share of the overhead (wall)"],
        rows: [
          ["plain XState actor", ratio(1), ""],
          ["journaled on memory (the product)", ratios(overhead), "100%"],
          ["journaled, snapshots off", ratios(noSnapshots), `snapshots: ${snapshotShare}`],
        ],
      },
      {
        caption:
          "Where the time goes: CPU profile (V8 sampling, self time by module), in units of the plain run's total time",
        head: ["module", "plain XState", "journaled", "journaled − plain"],
        rows: [...top, rest].map((b) => [b.name, ratio(b.plain), ratio(b.journaled), ratio(b.journaled - b.plain)]),
      },
    ],
    goals: [
      {
        goal: `journaled run within ${GOAL}x of the plain XState actor (${turns} turns, memory)`,
        met: overhead.wall <= GOAL,
        detail: ratios(overhead),
      },
    ],
    notes: [
      "What the journaled path adds per macrostep: the planner's copy of the runtime state and its records (the input record, a TRANSITION), an append (the memory store deep-copies what it is given, " +
        "as a real store would serialize it), a JSON round trip of each effect's output, the effect chain's walk per call (each of its transitions computed once per process), and a persisted snapshot every 64 records " +
        "(the whole folded state, deep-copied). The profile rows say which of these cost what. The planner's transitions are XState's pure ones with the inert actor built once per machine " +
        '(actors/pureTransition.ts); a plain actor runs real child actors per effect, so "xstate" can weigh less in the journaled column than in the plain one.',
    ],
    raw: { samples, profiles },
  };
}
