// The runtime's maintenance executions (the sweep, the erase coordinator) and their internal effects: the
// steps of those machines, which run as journaled executions like any machine. The app registers them
// (on first need, see INTERNAL_LOGICS), not `defineConfig({ effects })`:
// - user config cannot see them: a user machine that invokes one is refused at start (UnknownEffectError),
//   and an effect id under the reserved `loom.` prefix is refused at boot;
// - they bypass the effect chain (kill switch, claim-check, redaction, the capability ring, user
//   middleware): grants cannot restrict them, a middleware never sees them, and the kill switch, which
//   stops agents' model and tool calls, does not block erasure or a sweep;
// - they are journaled like any step: STEP_COMPLETED / STEP_FAILED by a deterministic step id, served from
//   the log on resume. Each one is idempotent, because a crash before its outcome is journaled re-runs it.
import type { AnyStateMachine } from "xstate";
import { eraseCoordinatorMachine } from "../../machines/eraseCoordinator.js";
import { sweepMachine } from "../../machines/sweep.js";
import { retentionMachine } from "../../machines/retention.js";
import type { StepCall } from "../journal/host.js";
import type { InternalEffectContext, LifecycleHost } from "./host.js";
import { INTERNAL_EFFECTS } from "./internalEffects.js";

export { INTERNAL_EFFECT_IDS, isInternalEffect } from "./host.js";

/**
 * The machines that may invoke internal effects (the sweep, the erase coordinator). An app registers them
 * when a lifecycle function (loomwork/lifecycle) is first called on it, or when it rebuilds one of their
 * executions (app.resume, app.resumeUnfinished at boot), so a fresh app still finishes an unfinished one.
 */
export const INTERNAL_LOGICS: readonly AnyStateMachine[] = Object.freeze([
  sweepMachine,
  eraseCoordinatorMachine,
  retentionMachine,
]);

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
