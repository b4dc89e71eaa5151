// What a vendored machine of the XState conformance corpus declares (spec/xstate/corpus/*.ts): the machine
// as XState's own example or test wrote it, the events that example or test sends, and what loomwork needs
// beside it (its promise actors registered as effects). The harness (spec/xstate/harness.ts) runs it.
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from "xstate";
import { createTaskEffect, type Effect } from "../../actors/effects/effect.js";

/** XState's actor features, as issue 33 and docs/actors.md list them; each corpus machine names those it uses. */
export const FEATURES = [
  "states",
  "guards",
  "parallel",
  "history",
  "after",
  "raise",
  "delayed raise",
  "assign",
  "input",
  "output",
  "tags",
  "final",
  "invoke promise",
  "invoke machine",
  "sendTo",
  "sendParent",
  "forwardTo",
  "onDone",
  "onSnapshot",
  "spawn in assign",
  "spawnChild",
  "stop",
  "callback",
  "observable",
  "actions",
  "log",
  "emit",
  "systemId",
  "system.get",
] as const;
export type Feature = (typeof FEATURES)[number];

/** One thing the example or test does to the actor, then a wait for what it waits on. */
export interface Step {
  /** An event to send (`actor.send`, journaled by loomwork's `sendAsync`). */
  send?: AnyEventObject;
  /** Moves the controlled clock forward by this many ms, firing due timers one due time at a time. */
  advance?: number;
  /** Waits, on each runtime, until this holds (what an async actor's test awaits); `untilText` says what in a report. */
  until?: (snapshot: AnyMachineSnapshot) => boolean;
  untilText?: string;
}

export interface CorpusMachine {
  /** Unique in the corpus: `<source file's short name>/<test or machine>`. */
  name: string;
  /** The path in statelyai/xstate at CORPUS_COMMIT the machine is copied from. */
  source: string;
  machine: AnyStateMachine;
  input?: unknown;
  /** Waits after start (an initial state that invokes an async actor). */
  startUntil?: (snapshot: AnyMachineSnapshot) => boolean;
  startUntilText?: string;
  steps: Step[];
  /** The machine's promise actors registered for loomwork (the one change the goal allows). */
  effects?: Record<string, Effect>;
  /** Every change made to the machine or its actors when vendoring it, one sentence each. */
  changes: string[];
  features: Feature[];
  /** Steps run before the app is closed and the execution resumed in a fresh app (default: half, rounded up). */
  resumeAfter?: number;
}

/**
 * Timers for an actor's own code (a callback actor's `setInterval`), on the clock of the run the harness is
 * driving, so that the harness moves them as it moves XState's and loomwork's timers and never sleeps.
 */
export const harnessTimers = {
  clock: undefined as { setTimer(fn: () => void, ms: number): () => void } | undefined,
  setInterval(fn: () => void, ms: number): () => void {
    const clock = harnessTimers.clock;
    if (!clock) throw new Error("harnessTimers: no harness run is under way");
    let cancel = () => {};
    const arm = () => {
      cancel = clock.setTimer(() => {
        arm();
        fn();
      }, ms);
    };
    arm();
    return () => cancel();
  },
  setTimeout(fn: () => void, ms: number): () => void {
    const clock = harnessTimers.clock;
    if (!clock) throw new Error("harnessTimers: no harness run is under way");
    return clock.setTimer(fn, ms);
  },
};

/** The statelyai/xstate commit every corpus file is copied from. */
export const CORPUS_COMMIT = "b1811bf77bc2d1a74367328cec7907aa185b70df";

/** A promise actor's creator as loomwork runs it: the same function, registered as a task effect under the actor's name. */
export function promiseEffect<I, O>(
  creator: (args: { input: I; signal: AbortSignal }) => PromiseLike<O>,
): Effect<I, O> {
  return createTaskEffect(async (input: I, ctx) => creator({ input, signal: ctx.signal }));
}
