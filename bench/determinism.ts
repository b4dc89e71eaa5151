// The cost of execution.checkDeterminism (ADR 0012 D8): the bench agent run journaled on memory with the option
// off and on, interleaved, and a full replay of each log (a resume from the log alone), as ratios of off.
import { createApp } from "../actors/app.js";
import { memoryStores } from "../stores/memory.js";
import type { Stores } from "../stores/types.js";
import { benchConfig, benchLoop, EXECUTION_ID } from "./agent.js";
import { interleave, ratioOf, span, type Sample } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { ratios, type Section } from "./report.js";

function config(stores: Stores, turns: number, checkDeterminism: boolean) {
  const base = benchConfig(stores, turns, "off");
  return { ...base, execution: { ...base.execution, snapshotEvery: false as const, checkDeterminism } };
}

async function run(turns: number, stores: Stores, checkDeterminism: boolean): Promise<Sample> {
  const app = createApp(config(stores, turns, checkDeterminism));
  const end = span();
  await app.start(benchLoop(turns), { executionId: EXECUTION_ID, input: { prompt: "research" } });
  await app.result(EXECUTION_ID);
  const sample = end();
  await app.close();
  return sample;
}

async function replay(turns: number, stores: Stores): Promise<Sample> {
  const app = createApp({ ...config(stores, turns, false), logics: [benchLoop(turns)] });
  const end = span();
  await app.resume(EXECUTION_ID);
  const sample = end();
  await app.close();
  return sample;
}

export async function measureDeterminism(options: BenchOptions): Promise<Section> {
  const turns = options.compareTurns;
  const logs = { off: memoryStores(), on: memoryStores() };
  await run(turns, logs.off, false);
  await run(turns, logs.on, true);
  const samples = await interleave(
    {
      off: () => run(turns, memoryStores(), false),
      on: () => run(turns, memoryStores(), true),
      replayOff: () => replay(turns, logs.off),
      replayOn: () => replay(turns, logs.on),
    },
    { reps: options.inProcessReps, warmup: options.warmup },
  );
  const live = ratioOf(samples.on!, samples.off!);
  const replayed = ratioOf(samples.replayOn!, samples.replayOff!);
  return {
    id: "determinism",
    title: "execution.checkDeterminism: the cost of a context digest per TRANSITION",
    method: [
      `${turns} turns of the bench agent on \`memoryStores()\`, claim-check and snapshots off, with \`execution.checkDeterminism\` off and on. ` +
        `\`replay\`: \`app.resume\` of the ended run in a fresh app, from the log alone (a log with digests is checked by every replay). ` +
        `${options.inProcessReps} repetitions, interleaved, medians of wall-clock and of CPU time.`,
    ],
    tables: [
      {
        head: ["variant", "on / off (median wall; CPU)"],
        rows: [
          ["live run", ratios(live)],
          ["replay of the whole log", ratios(replayed)],
        ],
      },
    ],
    goals: [],
    notes: [
      "The digest is FNV-1a of the context's JSON text, once per macrostep: its cost grows with the context (the agent's transcript), so it is largest on long agents.",
    ],
    raw: { samples },
  };
}
