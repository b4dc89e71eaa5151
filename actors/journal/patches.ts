// The runtime's side of `patched(changeId)` (machines/helpers/patches.ts): per execution, which changes
// it takes, decided once and journaled as PATCH_MARKED. Live, the first macrostep that asks takes the
// change and journals its marker; in a replay, a macrostep takes a change exactly where its journaled
// records hold the marker, so an execution journaled before the change keeps the old path. Decisions
// ride in the runtime state (and its snapshots), so a later macrostep answers as the first did.
import type { PatchScope } from "../../machines/helpers/patches.js";
import { PATCH_MARKED, type StoredRecord } from "../../stores/schema.js";

/** Per change id: taken (true) or not (false) by this execution, as decided so far. */
export type PatchDecisions = Record<string, boolean>;

/** What one macrostep's planning decides: the scope its guards ask, and the markers it journals. */
export interface MacrostepPatches {
  readonly scope: PatchScope;
  readonly decisions: PatchDecisions;
  /** The change ids whose markers this macrostep journals, in order, right after its input record. */
  readonly markers: string[];
}

/**
 * The patch scope of one macrostep. `logged`: the markers its journaled records hold (a replay), or
 * undefined for a live macrostep, whose first asks are taken and marked.
 */
export function macrostepPatches(
  previous: PatchDecisions | undefined,
  logged: readonly string[] | undefined,
): MacrostepPatches {
  const decisions: PatchDecisions = { ...previous };
  const markers: string[] = logged ? [...logged] : [];
  for (const changeId of logged ?? []) decisions[changeId] = true;
  const scope: PatchScope = {
    decide(changeId, deprecated) {
      const known = decisions[changeId];
      // deprecatePatch is the new path for every execution (its precondition: none predating the change is left).
      if (known !== undefined) return deprecated || known;
      const taken = logged === undefined || deprecated;
      decisions[changeId] = taken;
      if (logged === undefined && taken) markers.push(changeId);
      return taken;
    },
  };
  return { scope, decisions, markers };
}

/** The markers journaled right after the input record at `index`: the consecutive PATCH_MARKED records that follow it. */
export function loggedMarkers(records: readonly StoredRecord[], index: number): string[] {
  const markers: string[] = [];
  for (let k = index + 1; k < records.length; k++) {
    const record = records[k]!;
    if (record.type !== PATCH_MARKED || typeof record.changeId !== "string") break;
    markers.push(record.changeId);
  }
  return markers;
}
