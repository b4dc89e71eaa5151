// The runtime's maintenance executions (the sweep, the erase coordinator) and their internal effects: the
// steps of those machines, which run as journaled executions like any machine. The app registers them,
// not `defineConfig({ effects })`:
// - user config cannot see them: a user machine that invokes one is refused at start (UnknownEffectError),
//   and an effect id under the reserved `loom.` prefix is refused at boot;
// - they bypass the effect chain (kill switch, claim-check, redaction, the capability ring, user
//   middleware): grants cannot restrict them, a middleware never sees them, and the kill switch, which
//   stops agents' model and tool calls, does not block erasure or a sweep;
// - they are journaled like any step: STEP_COMPLETED / STEP_FAILED by a deterministic step id, served from
//   the log on resume. Each one is idempotent, because a crash before its outcome is journaled re-runs it.
import type { AnyStateMachine } from "xstate";
import { eraseCoordinatorMachine } from "../../machines/eraseCoordinator.js";
import { ERASE_EFFECTS, SWEEP_EFFECTS } from "../../machines/helpers/maintenanceIds.js";
import { sweepMachine } from "../../machines/sweep.js";
import type { StepCall } from "../journal/host.js";
import type { InternalEffectContext, LifecycleHost } from "./host.js";
import { INTERNAL_EFFECTS } from "./internalEffects.js";

/** Every internal effect's id (their code, by id, is actors/lifecycle/internalEffects.ts). */
export const INTERNAL_EFFECT_IDS: readonly string[] = Object.freeze([...Object.values(SWEEP_EFFECTS), ...Object.values(ERASE_EFFECTS)]);

/** The machines that may invoke internal effects (the sweep, the erase coordinator): every app registers them, so a fresh app resumes them. */
export const INTERNAL_LOGICS: readonly AnyStateMachine[] = Object.freeze([sweepMachine, eraseCoordinatorMachine]);

/** True for `logic` itself being one of the runtime's own machines (by identity, not by id). */
export function isInternalMachine(logic: AnyStateMachine): boolean {
  return INTERNAL_LOGICS.includes(logic);
}

export function isInternalEffect(effectId: string): boolean {
  return INTERNAL_EFFECT_IDS.includes(effectId);
}

/**
 * Runs one internal step: the effect its pending step names, with the host. Its control records are
 * journaled by its execution (`call.appendControl`), which gives them their seq and moves its own head.
 */
export async function runInternalStep(host: LifecycleHost, call: StepCall): Promise<unknown> {
  const effect = INTERNAL_EFFECTS[call.pending.effectId]!;
  const ctx: InternalEffectContext = {
    host,
    executionId: call.executionId,
    stepId: call.pending.stepId,
    signal: call.signal,
    appendControl: (record) => call.appendControl([record]),
    readOwnLog: () => host.journal.read(call.executionId),
  };
  return effect.run(call.pending.input, ctx);
}
