// XState's pure transition() and initialTransition(), with the inert actor they need built once per logic.
// XState's own functions build it per call: createActor(logic), which computes the logic's whole initial
// snapshot (for a machine: its initial state, its context function) only to be thrown away, about 100 µs
// for the agent loop, once per journaled macrostep and once per layer of every effect step's chain walk.
// Here that actor is made once per logic and kept; what XState's inert scope gets fresh per call (the
// actor system children register in) is still fresh per call, so a spawned child's systemId never
// collides with a previous call's and nothing a call spawns outlives it.
import {
  createActor,
  createEmptyActor,
  type AnyActorRef,
  type AnyActorScope,
  type AnyEventObject,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventFromLogic,
  type ExecutableActionsFrom,
  type Snapshot,
  type SnapshotFrom,
} from "xstate";

type Step = [AnyMachineSnapshot, ExecutableActionsFrom<AnyStateMachine>[]];

const inertSelves = new WeakMap<AnyStateMachine, AnyActorRef>();
const INERT_SNAPSHOT: Snapshot<unknown> = Object.freeze({
  status: "active",
  output: undefined,
  error: undefined,
  value: {},
  context: {},
  children: {},
  historyValue: {},
});

/**
 * Offers `actor` (never started, made for `logic` by a restore) as the logic's inert self, so the first
 * transition does not build another: a restore makes one anyway, and createActor(logic) computes a whole
 * initial snapshot (the agent loop's context function, refusing the absent input) only to drop it. Kept
 * only when the logic has none yet. Its snapshot is never read by a transition: only its identity and system.
 */
export function offerInertSelf(logic: AnyStateMachine, actor: AnyActorRef): void {
  if (!inertSelves.has(logic)) inertSelves.set(logic, actor);
}

function scopeFor(
  logic: AnyStateMachine,
  actions: unknown[],
  parent?: AnyActorRef,
  children?: Record<string, AnyActorRef | undefined>,
  tree?: Record<string, AnyActorRef>,
): AnyActorScope {
  let self = inertSelves.get(logic);
  if (!self) {
    // Restored from a bare snapshot of the root, not started: createActor(logic) would compute the logic's initial
    // snapshot, resolving its entry actions, so a resolver with a side effect (a sendTo target function that logs)
    // would run once more than on XState.
    self = createActor(logic, { snapshot: INERT_SNAPSHOT });
    inertSelves.set(logic, self);
  }
  // A fresh system per call, as XState's createInertActorScope gives: children spawned while resolving
  // the transition register there, and are dropped with it.
  const system = createEmptyActor().system;
  self.system = system;
  // The parent sendParent resolves to (a child execution's stand-in: actors/journal/children.ts); none for a root.
  self._parent = parent;
  // The running children that have a systemId are registered in it again, so system.get finds them in a later
  // macrostep as on XState (whose system lives as long as the actor).
  const register: unknown = Reflect.get(system, "_set");
  // The actors the rest of the tree registered (a child execution's view, from its start record), before its own.
  if (typeof register === "function")
    for (const [systemId, ref] of Object.entries(tree ?? {})) register.call(system, systemId, ref);
  for (const child of Object.values(children ?? {})) {
    const systemId: unknown = child && "systemId" in child ? child.systemId : undefined;
    if (typeof systemId === "string" && typeof register === "function") register.call(system, systemId, child);
  }
  // XState unregisters a stopped child's systemId when it executes the stop, at once (a re-entered state spawns the
  // next one with the same systemId in the same macrostep); a pure transition executes nothing, so it is done here.
  const unregister: unknown = Reflect.get(system, "_unregister");
  const stopped = (action: unknown) => {
    if (typeof action !== "object" || action === null || !("type" in action) || action.type !== "xstate.stopChild")
      return;
    const params: unknown = "params" in action ? action.params : undefined;
    const ref: unknown =
      typeof params === "object" && params !== null && "actorRef" in params ? params.actorRef : params;
    if (typeof ref === "object" && ref !== null && typeof unregister === "function") unregister.call(system, ref);
  };
  return {
    self,
    id: "",
    sessionId: "",
    logger: () => undefined,
    defer: () => undefined,
    emit: () => undefined,
    stopChild: () => undefined,
    system,
    actionExecutor: (action) => {
      stopped(action);
      actions.push(action);
    },
  };
}

/** `transition(logic, snapshot, event)` of XState: the next snapshot and the actions to execute, executing none. */
export function pureTransition<T extends AnyStateMachine>(
  logic: T,
  snapshot: SnapshotFrom<T>,
  event: EventFromLogic<T>,
  parent?: AnyActorRef,
  running?: Record<string, AnyActorRef | undefined>,
  tree?: Record<string, AnyActorRef>,
): [SnapshotFrom<T>, ExecutableActionsFrom<T>[]];
/**
 * `running`: the children still running (their systemIds registered for system.get); absent: none. `tree`: the
 * actors registered elsewhere in the execution's tree, by systemId (registered first).
 */
export function pureTransition(
  logic: AnyStateMachine,
  snapshot: AnyMachineSnapshot,
  event: AnyEventObject,
  parent?: AnyActorRef,
  running?: Record<string, AnyActorRef | undefined>,
  tree?: Record<string, AnyActorRef>,
): Step {
  const actions: ExecutableActionsFrom<AnyStateMachine>[] = [];
  const next = logic.transition(snapshot, event, scopeFor(logic, actions, parent, running, tree));
  return [next, actions];
}

/** `initialTransition(logic, input)` of XState: the initial snapshot and the actions to execute, executing none. */
export function pureInitialTransition<T extends AnyStateMachine>(
  logic: T,
  input: unknown,
  parent?: AnyActorRef,
  tree?: Record<string, AnyActorRef>,
): [SnapshotFrom<T>, ExecutableActionsFrom<T>[]];
export function pureInitialTransition(
  logic: AnyStateMachine,
  input: unknown,
  parent?: AnyActorRef,
  tree?: Record<string, AnyActorRef>,
): Step {
  const actions: ExecutableActionsFrom<AnyStateMachine>[] = [];
  const next = logic.getInitialSnapshot(scopeFor(logic, actions, parent, undefined, tree), input);
  return [next, actions];
}

/**
 * Drops from a snapshot just planned the effect children that no longer run. XState keeps every child a
 * machine spawned in `snapshot.children` until a stopChild names it, and copies that map on every spawn
 * and stop: a finished tool call of the agent loop stayed there for the rest of the run, so each turn's
 * transition copied every child the run ever spawned. Under the runtime an effect child is a pending step
 * (persisted snapshots hold no children at all), so a child whose step has its outcome is let go here.
 * Children of other logic (not a registered effect) are kept as XState left them.
 */
export function dropFinishedChildren(
  snapshot: AnyMachineSnapshot,
  running: Readonly<Record<string, unknown>>,
  effectIds: ReadonlySet<string>,
): void {
  const children: Record<string, AnyActorRef | undefined> = snapshot.children;
  let kept: Record<string, AnyActorRef | undefined> | undefined;
  for (const id in children) {
    const child = children[id];
    const finished = !(id in running) && typeof child?.src === "string" && effectIds.has(child.src);
    if (finished && !kept) {
      kept = {};
      for (const before in children) {
        if (before === id) break;
        kept[before] = children[before];
      }
    } else if (!finished && kept) kept[id] = child;
  }
  if (kept) snapshot.children = kept;
}
