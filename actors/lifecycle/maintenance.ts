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
import { ERASE_EFFECTS, INTERNAL_MACHINES, SWEEP_EFFECTS } from "../../machines/helpers/maintenanceIds.js";
import type { StepCall } from "../journal/host.js";
import { isInternalLogic, type InternalEffectContext, type LifecycleHost } from "./host.js";

/**
 * Every internal effect's id. Their code (actors/lifecycle/internalEffects.ts: the sweep's and the
 * erasure's steps) loads on the first internal step, so an app that never sweeps or erases does not
 * bundle it (issue 18).
 */
export const INTERNAL_EFFECT_IDS: readonly string[] = Object.freeze([...Object.values(SWEEP_EFFECTS), ...Object.values(ERASE_EFFECTS)]);

/**
 * The machines that may invoke internal effects (the sweep, the erase coordinator) that are loaded: their
 * code loads with the lifecycle's on first use (issue 18). The app registers them as they load, and loads
 * them first when it resumes or starts one by logic id (`loadInternalLogics`), so a fresh app resumes them.
 */
export function loadedInternalLogics(): AnyStateMachine[] {
  return [...INTERNAL_MACHINES.values()];
}

/** True for `logic` itself being one of the runtime's own machines (by identity, not by id). */
export function isInternalMachine(logic: AnyStateMachine): boolean {
  return INTERNAL_MACHINES.get(logic.id) === logic;
}

/** Loads the runtime's own machines when `logicId` names one; resolves every one loaded. */
export async function loadInternalLogics(logicId: string | undefined): Promise<AnyStateMachine[]> {
  if (isInternalLogic(logicId)) await import("./onFirstUse.js");
  return loadedInternalLogics();
}

export function isInternalEffect(effectId: string): boolean {
  return INTERNAL_EFFECT_IDS.includes(effectId);
}

/**
 * Runs one internal step: the effect its pending step names, with the host. Its control records are
 * journaled by its execution (`call.appendControl`), which gives them their seq and moves its own head.
 */
export async function runInternalStep(host: LifecycleHost, call: StepCall): Promise<unknown> {
  const { INTERNAL_EFFECTS } = await import("./onFirstUse.js");
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
