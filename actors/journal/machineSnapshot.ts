// The machine's part of a persisted runtime state (planner.ts: persistState / restoreState), and how a
// resume rebuilds it without walking the context. XState's restoreSnapshot revives actor refs in the
// context: it walks every object of it (a Set of them, for cycles), which for an agent loop is the whole
// transcript, as long again as the JSON.parse that read it. A context that held no actor ref when it was
// persisted has nothing to revive: the state says so (`plainContext`), and its context is restored as read.
import { createActor, type AnyMachineSnapshot, type AnyStateMachine, type Snapshot } from "xstate";
import { offerInertSelf } from "../pureTransition.js";

/** The persisted snapshot of the machine, and whether its context holds no actor ref (so needs no reviving). */
export function persistMachine(
  machine: AnyStateMachine,
  snapshot: AnyMachineSnapshot,
): { machine: unknown; plainContext?: true } {
  // Children are the runtime's (pending steps, child executions), never persisted by XState: an inline child
  // (spawnChild(logic)) would make XState refuse the whole snapshot.
  const persisted = machine.getPersistedSnapshot({ ...snapshot, children: {} });
  // XState copies the context where it replaces an actor ref with its marker: the same object means none.
  const plainContext = "context" in persisted && persisted.context === snapshot.context;
  return { machine: { ...persisted, children: {} }, ...(plainContext ? { plainContext: true as const } : {}) };
}

/**
 * The machine snapshot a persisted state holds, restored without running anything (createActor with the
 * snapshot: never started, no side effects). `plainContext` (persistMachine's): the context is kept as read.
 */
export function restoreMachine(
  machine: AnyStateMachine,
  persisted: unknown,
  plainContext: unknown,
): AnyMachineSnapshot {
  if (plainContext === true && typeof persisted === "object" && persisted !== null && "context" in persisted) {
    const { context, ...rest } = persisted;
    const stub = { ...rest, context: {} };
    if (isSnapshot(stub)) {
      const actor = createActor(machine, { snapshot: stub });
      // A copy carries the context: the actor keeps its stub, and becomes the machine's inert self for pure
      // transitions (actors/pureTransition.ts) without holding this execution's transcript.
      const snapshot: AnyMachineSnapshot = { ...actor.getSnapshot(), context };
      offerInertSelf(machine, actor);
      return snapshot;
    }
  }
  // Anything else restores as it always did (XState reports a snapshot it cannot restore as status "error").
  return createActor(machine, { snapshot: persisted as never }).getSnapshot();
}

function isSnapshot(value: object): value is Snapshot<unknown> {
  return "status" in value && typeof value.status === "string";
}
