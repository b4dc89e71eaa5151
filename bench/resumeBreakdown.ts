// Where a resume's time goes: the phases of Execution.recover, run one by one with the runtime's own
// functions, each in units of the floor (JSON.parse of the same bytes). In-process on memory (warm), and
// once per fresh process on fs (cold, as a real resume is: bench/child/resumeFsPhases.ts).
import { restoreState, planMacrostep, type RuntimeState } from "../actors/journal/planner.js";
import { isJournalRecord, isMacrostepInput } from "../stores/schema.js";
import type { AgentLoopContext } from "../machines/agentLoop.js";
import type { Stores } from "../stores/types.js";
import { benchLoop, EXECUTION_ID } from "./agent.js";
import { collectGarbage, median } from "./measure.js";

export interface Phase {
  phase: string;
  /** Median milliseconds over the repetitions (for the ratio only). */
  ms: number;
}

/** Runs the phases of a resume once, timing each; `label` names what reading the snapshot costs on this store. */
export async function phasesOnce(
  stores: Stores,
  turns: number,
  label: string,
): Promise<{ phases: Record<string, number>; macrosteps: number; turnsReplayed: number }> {
  const machine = benchLoop(turns);
  const phases: Record<string, number> = {};
  const lap = (() => {
    let t = performance.now();
    return (name: string) => {
      const now = performance.now();
      phases[name] = now - t;
      t = now;
    };
  })();
  // No snapshot yet (a short run): the replay starts from EXECUTION_STARTED.
  const stored = await stores.events.getSnapshot(EXECUTION_ID);
  lap(`read the snapshot (${label})`);
  // No phase for the machine's definition hash: a resume takes its identity from the journaled start
  // (AppHost.rebuild), hashing a definition only to choose between held versions of its logic.
  let state: RuntimeState | undefined = stored ? restoreState(machine, stored.state) : undefined;
  lap("restore the XState snapshot (createActor with snapshot)");
  const tail = await stores.events.read(EXECUTION_ID, (stored?.seq ?? 0) + 1);
  lap("read the tail (`events.read(id, fromSeq)`)");
  const startTurn = state ? (state.snapshot.context as AgentLoopContext).turn : 0;
  const ctx = { machine, executionId: EXECUTION_ID, effectIds: new Set(["model", "search"]) };
  let macrosteps = 0;
  for (let k = 0; k < tail.length; macrosteps++) {
    const input = tail[k]!;
    if (!isJournalRecord(input) || !isMacrostepInput(input))
      throw new Error(`seq ${input.seq}: a ${input.type} record where a macrostep starts`);
    const step = planMacrostep(ctx, state, input);
    state = step.state;
    k += step.records.length;
  }
  lap("replay the tail (planMacrostep per record)");
  const context = state!.snapshot.context as AgentLoopContext;
  const turnsReplayed = context.turn - startTurn + 1;
  // No phase for the model requests: a replayed turn's request (the taint-fenced transcript) is a lazyStepInput,
  // built only when the step runs, so a replay serving the reply from the log never builds it.
  return { phases, macrosteps, turnsReplayed };
}

/** The phases on `stores` in-process, `reps` times after one warm-up, with the floor: medians. */
export async function resumePhases(
  stores: Stores,
  turns: number,
  reps: number,
): Promise<{ phases: Phase[]; floor: number; macrosteps: number; turnsReplayed: number }> {
  const texts = [
    JSON.stringify((await stores.events.getSnapshot(EXECUTION_ID)) ?? null),
    JSON.stringify(await stores.events.read(EXECUTION_ID)),
  ];
  const samples: Record<string, number[]> = {};
  const floors: number[] = [];
  let last = { macrosteps: 0, turnsReplayed: 0 };
  for (let i = 0; i <= reps; i++) {
    collectGarbage();
    const t = performance.now();
    for (const text of texts) JSON.parse(text);
    const floor = performance.now() - t;
    const once = await phasesOnce(stores, turns, "the memory store's JSON.parse of the kept text");
    last = { macrosteps: once.macrosteps, turnsReplayed: once.turnsReplayed };
    if (i === 0) continue;
    floors.push(floor);
    for (const [name, ms] of Object.entries(once.phases)) (samples[name] ??= []).push(ms);
  }
  return {
    ...last,
    phases: Object.entries(samples).map(([phase, values]) => ({ phase, ms: median(values) })),
    floor: median(floors),
  };
}
