// Child executions and the messages of a tree (ADR 0012): the pure facts the planner and the runtime share.
// A machine a parent invokes or spawns is a step of the parent (effect id `loom.child`) and an execution of its own,
// whose id is derived from the parent's; a message between executions of a tree carries an id its sender's log
// determines, so a receiver drops a duplicate and a recovering sender re-sends what was not acknowledged.
import { createEmptyActor, type AnyActorRef, type AnyStateMachine, type EventObject } from "xstate";
import { RUNTIME_ID_PREFIX } from "../../machines/helpers/constants.js";

/** The effect id of a child execution's step in its parent's log (STEP_COMPLETED / STEP_FAILED name it). */
export const CHILD_EFFECT_ID = `${RUNTIME_ID_PREFIX}child`;

/** What a parent's pending child step holds (persisted with it): enough to start, resume or stop the child. */
export interface ChildSpec {
  /** The child execution's id: `<parent id>/<child id>`, `#n` for the n-th occurrence of that child id (n >= 2). */
  executionId: string;
  /** The child machine's id (its logic id in the app). */
  logicId: string;
  /** The source name the parent's machine invokes it by (`setup({ actors })` key, or XState's inline name). */
  src?: string;
  /** The child's input, as the parent's transition resolved it. */
  input: unknown;
  /** The invoke's or spawn's `systemId`, registered again for `system.get` after a restore. */
  systemId?: string;
  /** The invoke has `onSnapshot`: the child sends its parent each snapshot (`xstate.snapshot.<child id>`). */
  syncSnapshot?: boolean;
  /** The tree's registry as the parent saw it when it started the child (its view of `system.get`). */
  system?: TreeSystem;
}

/** Where an actor a tree registered by `systemId` lives: a child execution, or a live source of an execution. */
export interface TreeAddress {
  executionId: string;
  /** The live source's child id in that execution; absent: the execution itself. */
  source?: string;
}

/** A tree's registry (ADR 0012 D4) as one execution sees it: each systemId and where its actor lives. */
export type TreeSystem = Record<string, TreeAddress>;

/** The child spec of a pending step that is a child execution (effect id `loom.child`); undefined for any other step. */
export function childSpecOf(step: { effectId: string; input: unknown }): ChildSpec | undefined {
  if (step.effectId !== CHILD_EFFECT_ID) return undefined;
  const spec = step.input;
  return typeof spec === "object" &&
    spec !== null &&
    "executionId" in spec &&
    typeof spec.executionId === "string" &&
    "logicId" in spec &&
    typeof spec.logicId === "string" &&
    "input" in spec &&
    (!("src" in spec) || typeof spec.src === "string")
    ? {
        executionId: spec.executionId,
        logicId: spec.logicId,
        input: spec.input,
        ...("src" in spec && typeof spec.src === "string" ? { src: spec.src } : {}),
        ...("systemId" in spec && typeof spec.systemId === "string" ? { systemId: spec.systemId } : {}),
        ...("syncSnapshot" in spec && spec.syncSnapshot === true ? { syncSnapshot: true } : {}),
        ...("system" in spec && isTreeSystem(spec.system) ? { system: spec.system } : {}),
      }
    : undefined;
}

/** True for a registry as journaled (EXECUTION_STARTED's `parent.system`): systemIds to addresses. */
export function isTreeSystem(value: unknown): value is TreeSystem {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.values(value).every(
    (address: unknown) =>
      typeof address === "object" &&
      address !== null &&
      "executionId" in address &&
      typeof address.executionId === "string" &&
      (!("source" in address) || typeof address.source === "string"),
  );
}

/** A child execution's link to its parent (journaled in its EXECUTION_STARTED, kept in its runtime state). */
export interface ParentLink {
  executionId: string;
  childId: string;
  stepId: string;
  /** The root of the tree (EXECUTION_STARTED's `root`, kept here in the runtime state). */
  root?: string;
  /** The parent's invoke has `onSnapshot`: each snapshot of the child is a message to it. */
  syncSnapshot?: boolean;
  /** The tree's registry when the parent started this child: what `system.get` finds beyond its own children. */
  system?: TreeSystem;
}

/** A message from one execution of a tree to another, planned by the sender's macrostep (its outbox). */
export interface TreeMessage {
  to: string;
  event: EventObject;
  /** To a live source of the receiver (found through the tree's registry): delivered to it live, not journaled. */
  source?: string;
  /** `<sender id>@<seq of the macrostep's input record>:<index in the macrostep>`. */
  messageId: string;
}

/** The id of a child execution: `<parent>/<childId>`, with `#n` from the second occurrence on. */
export function childExecutionId(parentId: string, childId: string, occurrence: number): string {
  return occurrence > 1 ? `${parentId}/${childId}#${occurrence}` : `${parentId}/${childId}`;
}

/** True for an XState state machine (a logic with states), as opposed to promise, callback or observable logic. */
export function isMachineLogic(logic: unknown): logic is AnyStateMachine {
  return (
    typeof logic === "object" &&
    logic !== null &&
    "root" in logic &&
    "transition" in logic &&
    typeof logic.transition === "function" &&
    "getInitialSnapshot" in logic
  );
}

/**
 * The logic a machine names by `src`, as XState resolves it: a key of `setup({ actors })`, or the generated name of an
 * inline actor (`xstate.invoke.<i>.<state node id>`), read off the state node's config.
 */
export function referencedLogic(machine: AnyStateMachine, src: string): unknown {
  const match = /^xstate\.invoke\.(\d+)\.(.*)$/.exec(src);
  if (!match) return machine.implementations?.actors?.[src];
  try {
    const invoke: unknown = machine.getStateNodeById(match[2]!).config.invoke;
    const config: unknown = Array.isArray(invoke) ? invoke[Number(match[1])] : invoke;
    return typeof config === "object" && config !== null && "src" in config ? config.src : undefined;
  } catch {
    return undefined;
  }
}

/** Every machine `machine` may start as a child (named in setup's actors or inline in an invoke), recursively, itself excluded. */
export function childMachinesOf(
  machine: AnyStateMachine,
  seen = new Set<AnyStateMachine>([machine]),
): AnyStateMachine[] {
  const found: AnyStateMachine[] = [];
  const add = (logic: unknown) => {
    if (!isMachineLogic(logic) || seen.has(logic)) return;
    seen.add(logic);
    found.push(logic, ...childMachinesOf(logic, seen));
  };
  for (const logic of Object.values(machine.implementations?.actors ?? {})) add(logic);
  const walk = (node: AnyStateMachine["root"]) => {
    for (const invoke of node.invoke ?? [])
      if (typeof invoke.src === "string") add(referencedLogic(machine, invoke.src));
    for (const child of Object.values(node.states ?? {})) walk(child);
  };
  walk(machine.root);
  return found;
}

// The stand-in a child's pure transitions get as their parent (actorScope.self._parent): sendParent resolves to it,
// and the planner turns a send to it into a message to the parent execution. A root has none, so sendParent there
// throws as XState's does.
const parentStandIn: AnyActorRef = createEmptyActor();

/** The parent stand-in of pure transitions (see above). */
export function parentRef(): AnyActorRef {
  return parentStandIn;
}

/**
 * A child ref for a snapshot restored from a persisted state (which holds no children): what XState's transition
 * needs to resolve `sendTo(childId)` and the stop of the invoking state. Never started; sends nothing.
 */
export function restoredChildRef(childId: string, src: string, systemId?: string): AnyActorRef {
  const ref = createEmptyActor();
  Object.assign(ref, { id: childId, src, systemId });
  return ref;
}

const treeAddresses = new WeakMap<object, TreeAddress>();

/** Where a live custom action's sends to a tree ref go (set only while an execution runs its actions). */
type LiveSink = (address: TreeAddress, event: EventObject) => void;
let liveSink: LiveSink | undefined;

/**
 * The ref `system.get(systemId)` returns in a pure transition for an actor registered elsewhere in the tree: the
 * planner turns a `sendTo` to it into a message of the tree; a custom action calling its `send` (run live, after the
 * macrostep is durable) hands the event to the tree at once, at most once, as any side effect of an action.
 */
export function treeRef(systemId: string, address: TreeAddress): AnyActorRef {
  const ref = createEmptyActor();
  Object.assign(ref, { id: systemId, systemId, send: (event: EventObject) => liveSink?.(address, event) });
  treeAddresses.set(ref, address);
  return ref;
}

/** The tree address a ref stands for (made by `treeRef`), if any. */
export function treeAddressOf(ref: unknown): TreeAddress | undefined {
  return typeof ref === "object" && ref !== null ? treeAddresses.get(ref) : undefined;
}

/** Runs `fn` (an execution's live actions) with `sink` receiving what they send to tree refs. */
export function withLiveSends<T>(sink: LiveSink, fn: () => T): T {
  const before = liveSink;
  liveSink = sink;
  try {
    return fn();
  } finally {
    liveSink = before;
  }
}

/** True when message `messageId` from its sender is at or below `mark` (the last one the receiver journaled from it). */
export function isDelivered(mark: string | undefined, messageId: string): boolean {
  if (mark === undefined) return false;
  const [seqA, indexA] = position(mark);
  const [seqB, indexB] = position(messageId);
  return seqB < seqA || (seqB === seqA && indexB <= indexA);
}

function position(messageId: string): [number, number] {
  const match = /@(\d+):(\d+)$/.exec(messageId);
  return match ? [Number(match[1]), Number(match[2])] : [Number.NaN, Number.NaN];
}

/** A live source a parent's machine started (a callback or observable actor): how to start it again after a resume. */
export interface SourceSpec {
  /** The source name the parent's machine invokes it by (absent: spawned by its logic object, not restartable). */
  src?: string;
  input: unknown;
  /** The invoke's onSnapshot: the source's snapshots reach the parent as events. */
  syncSnapshot?: boolean;
  /** The invoke's or spawn's `systemId`. */
  systemId?: string;
}

/**
 * True for promise logic (fromPromise): its transition finishes it on XState's resolve event. Told apart from callback
 * and observable logic by asking that pure transition, which runs nothing.
 */
export function isPromiseLogic(logic: unknown): boolean {
  if (typeof logic !== "object" || logic === null || !("transition" in logic) || typeof logic.transition !== "function")
    return false;
  try {
    const next: unknown = logic.transition(
      { status: "active", output: undefined, error: undefined, input: undefined },
      { type: "xstate.promise.resolve", data: 1 },
      {},
    );
    return typeof next === "object" && next !== null && "status" in next && next.status === "done";
  } catch {
    return false;
  }
}

/** True for logic the runtime runs as a live source: any actor logic that is neither a machine nor promise logic. */
export function isSourceLogic(logic: unknown): boolean {
  return (
    typeof logic === "object" &&
    logic !== null &&
    "transition" in logic &&
    typeof logic.transition === "function" &&
    !isMachineLogic(logic) &&
    !isPromiseLogic(logic)
  );
}
