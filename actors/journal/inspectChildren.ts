// The child actors an inspector is told of: the runtime drives machines through XState's pure
// transition(), so no child actor runs; the children a snapshot lists (an invoked or spawned step) are
// announced as actors of their own, with the execution as their parent, and given a final snapshot when
// their outcome arrives (xstate.done.actor.<id>, xstate.error.actor.<id>) or their state is left.
// Pure: the live path (observers.ts) and `loomwork inspect --logic` share it, so both name children alike.

/** A child's session id: `<parent session>/<child id>`, and `#<n>` for its n-th run under one id (a model step re-invoked each turn). */
export function childSessionId(parentSessionId: string, childId: string, run: number): string {
  return `${parentSessionId}/${childId}${run > 1 ? `#${run}` : ""}`;
}

/** A child that ended in a macrostep, with the snapshot it ends with. */
export interface EndedChild {
  childId: string;
  sessionId: string;
  snapshot: { status: "done" | "error" | "stopped"; output?: unknown; error?: unknown };
}

/** What one macrostep did to the children: the ones it started, the ones it ended. */
export interface ChildChanges {
  started: { childId: string; sessionId: string }[];
  ended: EndedChild[];
}

const OUTCOME = /^xstate\.(done|error)\.actor\.(.+)$/;

/** Follows an execution's children across its macrosteps, in journal order. */
export class ChildTracker {
  private readonly live = new Map<string, { sessionId: string; ended: boolean }>();
  private readonly runs = new Map<string, number>();

  constructor(private readonly parentSessionId: string) {}

  /** `event`: the event the macrostep processed; `childIds`: the children its resulting snapshot lists. */
  step(event: { type: string; output?: unknown; error?: unknown }, childIds: readonly string[]): ChildChanges {
    const changes: ChildChanges = { started: [], ended: [] };
    const outcome = OUTCOME.exec(event.type);
    const settled = outcome ? this.live.get(outcome[2]!) : undefined;
    if (outcome && settled && !settled.ended) {
      settled.ended = true;
      const snapshot: EndedChild["snapshot"] =
        outcome[1] === "done" ? { status: "done", output: event.output } : { status: "error", error: event.error };
      changes.ended.push({ childId: outcome[2]!, sessionId: settled.sessionId, snapshot });
    }
    const listed = new Set(childIds);
    for (const [childId, child] of this.live) {
      if (listed.has(childId)) continue;
      if (!child.ended) changes.ended.push({ childId, sessionId: child.sessionId, snapshot: { status: "stopped" } });
      this.live.delete(childId);
    }
    for (const childId of childIds) {
      if (this.live.has(childId)) continue;
      const run = (this.runs.get(childId) ?? 0) + 1;
      this.runs.set(childId, run);
      const sessionId = childSessionId(this.parentSessionId, childId, run);
      this.live.set(childId, { sessionId, ended: false });
      changes.started.push({ childId, sessionId });
    }
    return changes;
  }
}

/** The ids of the children a snapshot lists. */
export function childIdsOf(snapshot: unknown): string[] {
  if (typeof snapshot !== "object" || snapshot === null || !("children" in snapshot)) return [];
  const { children } = snapshot;
  return typeof children === "object" && children !== null ? Object.keys(children) : [];
}
