// The one replay fold: journal records onto a runtime state, through the pure planner. Recovery
// (Execution.recover), the archive's snapshot at the head (actors/lifecycle/retention.ts) and so app.stats use it,
// so they agree on every record: a control record is skipped, a stopped EXECUTION_ENDED (app.stop
// journals it on its own, between macrosteps) ends the state as stopped, and a macrostep's records are
// checked against what the planner derives from its input.
import { EXECUTION_ENDED } from "../../stores/schema.js";
import type { JournalRecord } from "../../stores/types.js";
import { isControlRecord } from "../constants.js";
import { NonDeterminismError, type SerializedError } from "../errors.js";
import { isMacrostepInput, plannedFacts, planMacrostep, type Macrostep, type PlanContext, type RuntimeState } from "./planner.js";

/** Where a fold stands: the state so far (none before EXECUTION_STARTED) and the seq it has folded through. */
export interface FoldPosition {
  state: RuntimeState | undefined;
  seq: number;
}

/**
 * Folds `records` (contiguous, after `from.seq`) onto `from`; calls `onMacrostep` after each replayed
 * macrostep. Throws NonDeterminismError for a gap, a record out of place, or a macrostep whose records
 * differ from what the planner derives.
 */
export function foldRecords(ctx: PlanContext, from: FoldPosition, records: JournalRecord[], onMacrostep?: (step: Macrostep) => void): FoldPosition {
  let { state, seq } = from;
  let i = 0;
  while (i < records.length) {
    const input = records[i]!;
    if (!isMacrostepInput(input)) {
      // Control records (erasure) stand between macrosteps; anything else here means a record was removed.
      if (isControlRecord(input.type)) {
        seq = input.seq;
        i++;
        continue;
      }
      if (input.type === EXECUTION_ENDED && input.status === "stopped" && state && input.seq === seq + 1) {
        state = { ...state, status: "stopped", error: input.error as SerializedError, pending: {}, timers: {} };
        seq = input.seq;
        i++;
        continue;
      }
      throw new NonDeterminismError(ctx.executionId, input.seq, "a record of type", input.type, "the start of a macrostep");
    }
    if (input.seq !== seq + 1) throw new NonDeterminismError(ctx.executionId, input.seq, "seq", input.seq, seq + 1);
    const step = planMacrostep(ctx, state, input);
    for (let k = 1; k < step.records.length; k++) {
      const logged = records[i + k];
      const planned = step.records[k]!;
      const expected = logged ? plannedFacts(logged) : "no record";
      const actual = plannedFacts({
        ...planned,
        dueAt: planned.dueAt !== undefined && logged ? (logged.dueAt as number) : planned.dueAt,
        inputDigest: logged?.inputDigest === undefined ? undefined : planned.inputDigest,
      });
      if (JSON.stringify(expected) !== JSON.stringify(actual)) throw new NonDeterminismError(ctx.executionId, planned.seq, "record", expected, actual);
    }
    state = step.state;
    seq = step.records.at(-1)!.seq;
    i += step.records.length;
    onMacrostep?.(step);
  }
  return { state, seq };
}
