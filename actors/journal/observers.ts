// Who hears of an execution's macrosteps: its subscribers (getSnapshot-style snapshots, completed when
// it ends), the inspector (XState's inspection events, with the execution's ref as actorRef) and its
// logic's hook. Nothing here writes or changes the execution.
import type { AnyMachineSnapshot, InspectionEvent, Observer, Subscription } from "xstate";
import { WARNING_CODES } from "../constants.js";
import type { ExecutionHost, MacrostepObserver } from "./host.js";
import { ChildTracker, childIdsOf } from "./inspectChildren.js";
import { childSpecOf } from "./children.js";
import type { Macrostep, RuntimeState } from "./planner.js";

/** The snapshot callers see: the machine's, with the status and error of an execution that failed or was stopped. */
export function snapshotOf(state: RuntimeState): AnyMachineSnapshot {
  if (state.status !== "error" && state.status !== "stopped") return state.snapshot;
  // One object per state, as XState's getSnapshot gives: useSyncExternalStore (React) loops on a new
  // object per call.
  let ended = endedSnapshots.get(state);
  if (!ended) {
    // XState's stopped snapshot has no error; a stopped execution's carries the stop's reason, hence the cast.
    ended = { ...state.snapshot, status: state.status, error: state.error } as AnyMachineSnapshot;
    endedSnapshots.set(state, ended);
  }
  return ended;
}

const endedSnapshots = new WeakMap<RuntimeState, AnyMachineSnapshot>();

/** The execution as its observers see it. */
export interface Observed {
  readonly executionId: string;
  readonly sessionId: string;
  readonly ref: object;
  readonly warned: Set<string>;
  /** A child execution's parent and root (its runtime state's link); absent for a root. */
  readonly state?: { readonly parent?: { executionId: string; root?: string } | undefined } | undefined;
}

export class ExecutionObservers {
  private readonly listeners = new Set<Observer<AnyMachineSnapshot>>();
  // The actor is announced with its first macrostep: an inspector reads actorRef.getSnapshot() when told
  // of the actor, and before the first macrostep (or the snapshot a resume starts from) there is none.
  private announced = false;
  // Made with the first macrostep an inspector watches: an app without one builds no tracker per execution.
  private children: ChildTracker | undefined;
  private childExecutions: Set<string> | undefined; // child ids that ran as child executions

  constructor(
    private readonly host: Pick<ExecutionHost, "inspect" | "inspecting" | "warn">,
    private readonly execution: Observed,
    private readonly hook: MacrostepObserver | undefined,
  ) {}

  subscribe(observer: Observer<AnyMachineSnapshot> | ((snapshot: AnyMachineSnapshot) => void)): Subscription {
    const o: Observer<AnyMachineSnapshot> = typeof observer === "function" ? { next: observer } : observer;
    this.listeners.add(o);
    return { unsubscribe: () => this.listeners.delete(o) };
  }

  /** Gives every subscriber the snapshot; an ended execution completes them and lets them go. */
  notify(snapshot: AnyMachineSnapshot, ended: boolean): void {
    for (const listener of [...this.listeners]) {
      try {
        listener.next?.(snapshot);
        if (ended) listener.complete?.();
      } catch (error) {
        this.host.warn({
          code: WARNING_CODES.subscriber,
          message: error instanceof Error ? error.message : String(error),
        });
      }
    }
    if (ended) this.listeners.clear();
  }

  announce(): void {
    if (this.announced || !this.host.inspecting) return;
    this.announced = true;
    const actorRef = this.execution.ref;
    // A child execution is announced as the child it is: its parent's session, as XState's child actors name theirs.
    const parent = this.execution.state?.parent;
    if (parent)
      Object.assign(actorRef, { _parent: { id: parent.executionId, sessionId: `loom:${parent.executionId}` } });
    this.inspect({ type: "@xstate.actor", actorRef });
  }

  /**
   * A macrostep, live or replayed: the inspector's event, the final snapshot of each child it ended, the
   * execution's snapshot, each child it started (inspectChildren.ts), then the logic's hook.
   */
  macrostep(step: Macrostep): void {
    const { snapshot } = step.state;
    if (this.host.inspecting) this.inspectMacrostep(step);
    this.hook?.(snapshot, this.execution);
  }

  /** The macrostep's inspection events; the child tracker follows only executions an inspector watches. */
  private inspectMacrostep(step: Macrostep): void {
    const actorRef = this.execution.ref;
    this.announce();
    const { snapshot } = step.state;
    // Child executions announce themselves (their own actor, with this one as parent): only other children get a stand-in.
    for (const [id, pending] of Object.entries(step.state.pending))
      if (childSpecOf(pending)) (this.childExecutions ??= new Set()).add(id);
    const changes = (this.children ??= new ChildTracker(this.execution.sessionId)).step(
      step.event,
      childIdsOf(snapshot).filter((id) => !this.childExecutions?.has(id)),
    );
    const child = (id: string, sessionId: string, status: string) => ({
      id,
      sessionId,
      _parent: actorRef,
      getSnapshot: () => ({ status }),
    });
    this.inspect(
      { type: "@xstate.event", sourceRef: undefined, actorRef, event: step.event },
      ...changes.ended.map((c) => ({
        type: "@xstate.snapshot",
        actorRef: child(c.childId, c.sessionId, c.snapshot.status),
        event: step.event,
        snapshot: c.snapshot,
      })),
      { type: "@xstate.snapshot", actorRef, event: step.event, snapshot },
      ...changes.started.map((c) => ({ type: "@xstate.actor", actorRef: child(c.childId, c.sessionId, "active") })),
    );
  }

  private inspect(...events: Record<string, unknown>[]): void {
    const rootId = `loom:${this.execution.state?.parent?.root ?? this.execution.executionId}`;
    // One cast: the actorRef handed to an inspector is the JournaledActor, which is not typed as an XState ActorRef.
    this.host.inspect(...events.map((event) => ({ ...event, rootId }) as InspectionEvent));
  }
}
