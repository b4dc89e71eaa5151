// The registry of the runtime's maintenance executions (the sweep, the erase coordinator): their
// internal effects, their machines, and the runner the app calls for an internal step instead of the
// effect chain. See actors/lifecycle/internalEffects.ts for what makes an effect internal.
import type { AnyStateMachine } from "xstate";
import { eraseCoordinatorMachine } from "../../machines/eraseCoordinator.js";
import { sweepMachine } from "../../machines/sweep.js";
import type { JournalRecord } from "../../stores/types.js";
import type { App } from "../app.js";
import { realClock } from "../clock.js";
import { eraseEffects } from "./erase.js";
import type { Execution } from "../journal/execution.js";
import type { InternalEffect, InternalEffectContext } from "./internalEffects.js";
import type { Journal } from "../journal/journal.js";
import type { PendingStep } from "../journal/planner.js";
import { sweepEffects, trackInflightOffloads } from "./sweep.js";

/** Every internal effect, by id. */
export const INTERNAL_EFFECTS: Readonly<Record<string, InternalEffect>> = Object.freeze({ ...sweepEffects, ...eraseEffects });

/** The machines that may invoke internal effects; the app registers them so a fresh app can resume them. */
export const INTERNAL_LOGICS: readonly AnyStateMachine[] = [sweepMachine, eraseCoordinatorMachine];

export function isInternalEffect(effectId: string): boolean {
  return Object.hasOwn(INTERNAL_EFFECTS, effectId);
}

/**
 * Runs one internal step of `execution`. The internal machines run one step at a time and take no
 * events or timers, so while a step runs nothing else appends to its log: `appendControl` can write at
 * `execution.seq + 1` and move the head, and the step's outcome follows at the next seq.
 */
export function runInternalStep(app: App, journal: Journal, execution: Execution, pending: PendingStep, signal: AbortSignal): Promise<unknown> {
  const effect = INTERNAL_EFFECTS[pending.effectId]!;
  const clock = app.config.clock ?? realClock;
  const ctx: InternalEffectContext = {
    app,
    executionId: execution.executionId,
    stepId: pending.stepId,
    signal,
    appendControl: async (partial) => {
      const record = { seq: execution.seq + 1, at: clock.now(), ...partial } as JournalRecord;
      await journal.append(execution.executionId, execution.seq, [record], execution.subject);
      execution.seq = record.seq;
      app.bus.emit("append", { executionId: execution.executionId, records: [record] });
      return record.seq;
    },
    readOwnLog: () => journal.read(execution.executionId),
  };
  return effect.run(pending.input, ctx);
}

/** Installs what the lifecycle needs from the app's bus from the first moment (the in-flight offload tracker). */
export function attachLifecycle(app: App): void {
  trackInflightOffloads(app);
}

