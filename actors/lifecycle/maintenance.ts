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
import { sweepMachine } from "../../machines/sweep.js";
import type { JournalRecord, RecordBody } from "../../stores/types.js";
import type { PendingStep } from "../journal/planner.js";
import { eraseEffects } from "./erase.js";
import type { InternalEffect, InternalEffectContext, LifecycleHost } from "./host.js";
import { sweepEffects } from "./sweep.js";

/** Every internal effect, by id. */
export const INTERNAL_EFFECTS: Readonly<Record<string, InternalEffect>> = Object.freeze({ ...sweepEffects, ...eraseEffects });

/** The machines that may invoke internal effects; the app registers them so a fresh app can resume them. */
export const INTERNAL_LOGICS: readonly AnyStateMachine[] = [sweepMachine, eraseCoordinatorMachine];

export function isInternalEffect(effectId: string): boolean {
  return Object.hasOwn(INTERNAL_EFFECTS, effectId);
}

/** One live run of an internal step: whose step it is, the step, its signal, and the control-record writer. */
export interface InternalStepCall {
  readonly executionId: string;
  readonly pending: PendingStep;
  readonly signal: AbortSignal;
  /** Journals control records in the execution's log while the step runs; resolves the seq of the last. */
  appendControl(records: readonly RecordBody[]): Promise<number>;
}

/** Runs one internal step: the effect its pending step names, with the host and the step's control-record writer. */
export function runInternalStep(host: LifecycleHost, call: InternalStepCall): Promise<unknown> {
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

/**
 * The control-record writer of an execution that does not journal control records itself. The internal
 * machines run one step at a time and take no events or timers, so while a step runs nothing else appends
 * to its log: a control record is written at `execution.seq + 1` and moves the head, and the step's
 * outcome follows at the next seq.
 */
export function controlWriterOf(host: LifecycleHost, execution: { readonly executionId: string; readonly subject?: string | undefined; seq: number }): InternalStepCall["appendControl"] {
  return async (partials) => {
    const at = host.clock.now();
    const records = partials.map((partial, i): JournalRecord => ({ seq: execution.seq + 1 + i, at, ...partial }));
    if (records.length === 0) return execution.seq;
    await host.journal.append(execution.executionId, execution.seq, records, execution.subject);
    execution.seq = records.at(-1)!.seq;
    host.bus.emit("append", { executionId: execution.executionId, records });
    return execution.seq;
  };
}
