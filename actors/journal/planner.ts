// The macrostep planner: a pure function from (runtime state, input record) to the next state and the
// records to journal. Live runs and replays share it, so what replay checks is exactly what was written.
import {
  type AnyActorRef,
  type AnyEventObject,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventObject,
} from "xstate";
import { isStepInput, LOOM_STEP } from "../../machines/helpers/effectActor.js";
import { taskKindOf, type TaskKind } from "../../machines/helpers/invokeAs.js";
import { fnv1a32 } from "../../stores/bytes.js";
import * as schema from "../../stores/schema.js";
import { transitionValueText } from "../../stores/recordFormat.js";
import { isEventObject } from "../../stores/shapes.js";
import type { ExecutionStatus, JournalRecord, MacrostepInput, RecordBody, StoredRecord } from "../../stores/types.js";
import type { TimerTarget } from "../../stores/schema.js";

export type { ExecutionStatus };
import {
  ChildLimitError,
  DuplicateSystemIdError,
  NonDeterminismError,
  serializeError,
  type SerializedError,
} from "../errors.js";
import { DEFAULT_CHILDREN_LIMITS } from "../config.js";
import { withPatchScope } from "../../machines/helpers/patches.js";
import { macrostepPatches, type PatchDecisions } from "./patches.js";
import { dropFinishedChildren, pureInitialTransition, pureTransition } from "../pureTransition.js";
import { Counters } from "./counters.js";
import { isLiveAction, type CollectedAction } from "./liveActions.js";
import { persistMachine, restoreMachine } from "./machineSnapshot.js";
import {
  CHILD_EFFECT_ID,
  childExecutionId,
  childSpecOf,
  isMachineLogic,
  isSourceLogic,
  parentRef,
  restoredChildRef,
  treeAddressOf,
  treeRef,
  type ChildSpec,
  type ParentLink,
  type SourceSpec,
  type TreeMessage,
  type TreeSystem,
} from "./children.js";

/** An effect invocation that has started and has no journaled outcome yet. */
export interface PendingStep {
  childId: string;
  stepId: string;
  effectId: string;
  input: unknown;
  /** The role the machine invoked the effect in (`invokeAs`); absent means the registered effect's kind. */
  taskKind?: TaskKind;
  /** A child execution's machine as the parent's transition resolved it (not enumerable: never persisted). */
  readonly logic?: unknown;
}

/** A delayed event due at `dueAt` (from the record that armed it, so replay re-arms the same time). */
export interface PendingTimer {
  dueAt: number;
  event: EventObject;
  /** A delayed `sendTo`'s receiver: its firing is a message of the tree (or a live source's event), not the machine's. */
  to?: TimerTarget;
}

/** Everything a resume needs beside the log's tail. JSON-safe once `snapshot` is persisted. */
export interface RuntimeState {
  snapshot: AnyMachineSnapshot;
  pending: Record<string, PendingStep>;
  timers: Record<string, PendingTimer>;
  /** Occurrences per child id, for default step ids (persistent: actors/journal/counters.ts). */
  counters: Counters;
  status: ExecutionStatus;
  output?: unknown;
  error?: SerializedError;
  /** The patches decided so far (actors/journal/patches.ts); absent until one is asked. */
  patches?: PatchDecisions;
  /** A child execution's parent (from its EXECUTION_STARTED); absent for a root. */
  parent?: ParentLink;
  /** Messages to other executions of the tree not yet acknowledged (MESSAGES_DELIVERED folds them out). */
  outbox?: TreeMessage[];
  /** Per sender execution, the id of the last message journaled from it (a duplicate is dropped unwritten). */
  inbox?: Record<string, string>;
  /** The child executions the last macrostep stopped: a recovery stops them again (a no-op once they ended). */
  stoppedChildren?: string[];
  /** Live sources (callback and observable actors) running, by child id: a resume starts them again. */
  sources?: Record<string, SourceSpec>;
}

export interface PlanContext {
  machine: AnyStateMachine;
  executionId: string;
  effectIds: ReadonlySet<string>;
  /** Journal a digest of the context in each TRANSITION (`execution.checkDeterminism`). */
  checkDeterminism?: boolean;
  /** `execution.children.maxFanOut`: child machines one macrostep may start (absent: the default). */
  maxFanOut?: number;
}

export interface Macrostep {
  state: RuntimeState;
  /** The input record followed by what the macrostep adds (TIMER_SET, TRANSITION, EXECUTION_ENDED). */
  records: JournalRecord[];
  /** The XState event the machine processed. */
  event: EventObject;
  started: PendingStep[];
  /** Child ids whose effects must be aborted (their state was left). */
  stopped: string[];
  armed: string[];
  cancelled: string[];
  /** Custom actions, log() and emit(), in order: run by a live execution once the macrostep is durable, never by replay. */
  actions: CollectedAction[];
  /** Messages to other executions of the tree, in the order XState planned them: sent once the macrostep is durable. */
  messages: TreeMessage[];
  /** Child executions (ids) this macrostep stopped: stopped, journaled in their logs, once it is durable. */
  stoppedChildren: string[];
  /** Live sources to start once the macrostep is durable, with their logic. */
  sourcesStarted: { childId: string; logic: unknown; spec: SourceSpec }[];
  /** Live sources to stop (their state was left, or the execution ended). */
  sourcesStopped: string[];
  /** What the machine sent its live sources, delivered live in order. */
  sourceSends: { childId: string; event: EventObject }[];
}

/** The state value as journaled in TRANSITION records: "a" or "a.b", or the leaf paths of parallel regions joined by ",". */
export function stateValueText(snapshot: AnyMachineSnapshot | undefined): string | null {
  return snapshot ? transitionValueText(snapshot.value) : null;
}

/**
 * Plans one macrostep for `input` (a record with its seq and at already set). `loggedMarkers`: in a replay,
 * the PATCH_MARKED change ids the journaled macrostep holds (undefined: a live macrostep).
 */
export function planMacrostep(
  ctx: PlanContext,
  previous: RuntimeState | undefined,
  input: MacrostepInput,
  loggedMarkers?: readonly string[],
): Macrostep {
  const { machine } = ctx;
  const state: RuntimeState = previous
    ? { ...previous, pending: { ...previous.pending }, timers: { ...previous.timers } }
    : {
        snapshot: undefined as unknown as AnyMachineSnapshot,
        pending: {},
        timers: {},
        counters: Counters.empty,
        status: "running",
      };
  if (input.type === schema.EXECUTION_STARTED && isParentLink(input.parent))
    state.parent = typeof input.root === "string" ? { ...input.parent, root: input.root } : input.parent;
  // A delayed sendTo firing: its event goes to its receiver; the machine does not see it.
  const forwardTo =
    previous && input.type === schema.EVENT_RECEIVED && typeof input.timerId === "string"
      ? state.timers[input.timerId]?.to
      : undefined;
  const event = eventOf(ctx, state, input);
  const records: JournalRecord[] = [input];
  const step: Macrostep = {
    state,
    records,
    event,
    started: [],
    stopped: [],
    armed: [],
    cancelled: [],
    actions: [],
    messages: [],
    stoppedChildren: [],
    sourcesStarted: [],
    sourcesStopped: [],
    sourceSends: [],
  };
  const stopSources = () => {
    step.sourcesStopped.push(...Object.keys(state.sources ?? {}));
    delete state.sources;
  };
  // Each child step stopped is a child execution to stop; the last macrostep's are kept for a recovery to repeat.
  const stop = (childId: string) => {
    const spec = state.pending[childId] && childSpecOf(state.pending[childId]);
    if (spec) step.stoppedChildren.push(spec.executionId);
    step.stopped.push(childId);
  };
  const keepStops = () => {
    if (step.stoppedChildren.length > 0) state.stoppedChildren = step.stoppedChildren;
    else delete state.stoppedChildren;
  };
  const parent = state.parent ? parentRef() : undefined;
  let seq = input.seq;
  const push = (record: RecordBody) => records.push({ seq: ++seq, at: input.at, ...record });
  // A message of the tree: its id from this macrostep's input record and its place in it; in the outbox until acknowledged.
  const send = (to: string, event: EventObject, source?: string) => {
    const message: TreeMessage = {
      to,
      event,
      messageId: `${ctx.executionId}@${input.seq}:${step.messages.length}`,
      ...(source === undefined ? {} : { source }),
    };
    step.messages.push(message);
    state.outbox = [...(state.outbox ?? []), message];
  };
  if (forwardTo !== undefined && previous) {
    if (typeof forwardTo === "string") send(forwardTo, event);
    else if (state.sources?.[forwardTo.source]) step.sourceSends.push({ childId: forwardTo.source, event });
    return step;
  }

  const patches = macrostepPatches(previous?.patches, loggedMarkers);
  // The markers follow the input record, before what the transition adds; decided once, kept in the state.
  const markPatches = () => {
    for (const changeId of patches.markers) push({ type: schema.PATCH_MARKED, changeId });
    if (Object.keys(patches.decisions).length > 0) state.patches = patches.decisions;
  };
  let next: AnyMachineSnapshot;
  let actions: CollectedAction[] = [];
  try {
    [next, actions] = withPatchScope(patches.scope, () => {
      if (previous && event.type.startsWith("xstate.error.actor.") && !previous.snapshot.can(event)) throw event.error;
      const tree = treeRefs(state.parent?.system);
      return previous
        ? pureTransition(machine, previous.snapshot, event, parent, runningChildren(previous), tree)
        : pureInitialTransition(machine, input.input, parent, tree);
    });
    checkFanOut(ctx, actions);
    markPatches();
  } catch (caught) {
    markPatches();
    const thrown = treeDuplicate(ctx, state, caught);
    const error = isSerialized(thrown) ? thrown : serializeError(thrown);
    state.status = "error";
    state.error = error;
    for (const childId of Object.keys(state.pending)) stop(childId);
    state.pending = {};
    state.timers = {};
    stopSources();
    keepStops();
    push({ type: schema.EXECUTION_ENDED, status: "error", error });
    return step;
  }

  const sends: Record<string, any>[] = [];
  const spawned = new Set<string>();
  for (const action of actions) {
    if (isLiveAction(action)) {
      step.actions.push(action);
      continue;
    }
    const params = (action.params ?? {}) as Record<string, any>;
    switch (action.type) {
      case "xstate.spawnChild": {
        const src = params.src;
        const childId = String(params.id);
        spawned.add(childId);
        if (typeof src === "string" && ctx.effectIds.has(src))
          spawnEffect(ctx, state, step, childId, src, params.input);
        else {
          const logic: unknown = params.actorRef?.logic;
          const systemId = typeof params.systemId === "string" ? params.systemId : undefined;
          // onSnapshot: XState passes it to the child actor it resolved (its _syncSnapshot), not in the action's params.
          const syncSnapshot = params.actorRef?._syncSnapshot === true;
          if (isMachineLogic(logic))
            spawnMachine(ctx, state, step, childId, src, logic, params.input, systemId, syncSnapshot);
          else if (isSourceLogic(logic)) {
            const spec: SourceSpec = {
              ...(typeof src === "string" ? { src } : {}),
              input: params.input ?? null,
              ...(syncSnapshot ? { syncSnapshot: true } : {}),
              ...(systemId === undefined ? {} : { systemId }),
            };
            state.sources = { ...state.sources, [childId]: spec };
            step.sourcesStarted.push({ childId, logic, spec });
          }
        }
        break;
      }
      case "xstate.stopChild": {
        const childId = typeof params.actorRef === "string" ? params.actorRef : params.actorRef?.id;
        if (childId && state.pending[childId]) {
          stop(childId);
          delete state.pending[childId];
        } else if (childId && state.sources?.[childId]) {
          state.sources = withoutSource(state.sources, childId);
          step.sourcesStopped.push(childId);
        }
        break;
      }
      case "xstate.sendTo":
        // XState defers its sends to the end of the macrostep: a child spawned after the send in it receives it.
        sends.push(params);
        break;
      case "xstate.raise": {
        if (params.delay === undefined) break;
        const timerId = params.id === undefined ? nextTimerId(state, String(params.event?.type)) : String(params.id);
        state.timers[timerId] = { dueAt: input.at + Number(params.delay), event: params.event };
        step.armed.push(timerId);
        push({ type: schema.TIMER_SET, timerId, dueAt: input.at + Number(params.delay), event: params.event });
        break;
      }
      case "xstate.cancel": {
        const timerId = String(params.sendId);
        if (state.timers[timerId]) {
          delete state.timers[timerId];
          step.cancelled.push(timerId);
        }
        break;
      }
    }
  }

  // spawn() inside assign: XState starts what it spawns there itself (a deferred start a pure transition drops) and
  // plans no spawnChild action, so the children the transition added beyond the actions' are planned here.
  const before: Record<string, unknown> = previous?.snapshot.children ?? {};
  const children: Record<string, AnyActorRef | undefined> = next.children;
  // XState copies the map only when it spawns or stops: the same map has nothing new (a fan-out's 1,000 outcomes
  // would each walk 1,000 children).
  for (const [childId, ref] of children === before ? [] : Object.entries(children)) {
    if (!ref || childId in before || spawned.has(childId) || state.pending[childId]) continue;
    const options: unknown = "options" in ref ? ref.options : undefined;
    const input = typeof options === "object" && options !== null && "input" in options ? options.input : undefined;
    if (typeof ref.src === "string" && ctx.effectIds.has(ref.src))
      spawnEffect(ctx, state, step, childId, ref.src, input);
    else {
      const logic: unknown = "logic" in ref ? ref.logic : undefined;
      const systemId: unknown = "systemId" in ref ? ref.systemId : undefined;
      if (isMachineLogic(logic))
        spawnMachine(
          ctx,
          state,
          step,
          childId,
          ref.src,
          logic,
          input,
          typeof systemId === "string" ? systemId : undefined,
        );
      else if (isSourceLogic(logic)) {
        const spec: SourceSpec = { ...(typeof ref.src === "string" ? { src: ref.src } : {}), input: input ?? null };
        state.sources = { ...state.sources, [childId]: spec };
        step.sourcesStarted.push({ childId, logic, spec });
      }
    }
  }
  for (const params of sends) {
    if (!isEventObject(params.event)) continue;
    // An actor registered elsewhere in the tree (system.get): a message to its execution (or its live source there).
    const remote = treeAddressOf(params.to);
    if (remote && params.delay === undefined) {
      send(remote.executionId, params.event, remote.source);
      continue;
    }
    const sourceId = sourceTarget(state, params.to);
    // A send to an effect, to itself or to an actor outside the tree is none of the runtime's (as before).
    const to: TimerTarget | undefined = sourceId === undefined ? messageTarget(state, params.to) : { source: sourceId };
    if (to === undefined) continue;
    if (params.delay !== undefined) {
      // Delayed: a timer of this execution whose firing sends the event on (a message of the tree, exactly once).
      const timerId = params.id === undefined ? nextTimerId(state, params.event.type) : String(params.id);
      const dueAt = input.at + Number(params.delay);
      state.timers[timerId] = { dueAt, event: params.event, to };
      step.armed.push(timerId);
      push({ type: schema.TIMER_SET, timerId, dueAt, event: params.event, to });
    } else if (typeof to === "string") send(to, params.event);
    else step.sourceSends.push({ childId: to.source, event: params.event });
  }
  shareSystem(ctx, state, step);
  // onSnapshot: a child whose parent asked for its snapshots sends each active one, as XState's syncSnapshot relays it.
  if (state.parent?.syncSnapshot && next.status === "active") {
    const event: AnyEventObject = {
      type: `xstate.snapshot.${state.parent.childId}`,
      snapshot: { status: next.status, value: next.value, context: next.context },
    };
    send(state.parent.executionId, event);
  }
  dropFinishedChildren(next, state.pending, ctx.effectIds);
  push({
    type: schema.TRANSITION,
    from: stateValueText(previous?.snapshot),
    to: stateValueText(next),
    event: event.type,
    // The first transition vouches for the start input: a replay of an edited input diverges loudly.
    ...(previous ? {} : { inputDigest: digestOf(input.input ?? null) }),
    ...(ctx.checkDeterminism ? { contextDigest: contextDigestOf(next) } : {}),
  });
  state.snapshot = next;
  if (next.status === "done") {
    state.status = "done";
    state.output = next.output;
    for (const childId of Object.keys(state.pending)) stop(childId);
    state.pending = {};
    state.timers = {};
    stopSources();
    push({
      type: schema.EXECUTION_ENDED,
      status: "done",
      ...(next.output === undefined ? {} : { output: next.output }),
    });
  } else if (next.status === "error") {
    state.status = "error";
    state.error = serializeError(treeDuplicate(ctx, state, next.error));
    stopSources();
    push({ type: schema.EXECUTION_ENDED, status: "error", error: state.error });
  }
  keepStops();
  return step;
}

/** An effect spawned or invoked: a pending step, its id derived from the child id's occurrences (or the step's name). */
function spawnEffect(
  ctx: PlanContext,
  state: RuntimeState,
  step: Macrostep,
  childId: string,
  src: string,
  given: unknown,
): void {
  const occurrence = state.counters.get(childId) + 1;
  // One entry per child id ever spawned: a new version per spawn, the previous state's left as it was.
  state.counters = state.counters.with(childId, occurrence);
  const named = isStepInput(given);
  const stepId = `${ctx.machine.id}#${named ? given[LOOM_STEP] : `${childId}:${occurrence}`}`;
  const taskKind = taskKindOf(given);
  // The input is read through, never copied here: a step built lazily (lazyStepInput) is built only
  // when it runs or is persisted, so a replay serving it from the log never builds it.
  const pending: PendingStep = {
    childId,
    stepId,
    effectId: src,
    ...(taskKind ? { taskKind } : {}),
    get input() {
      return named ? given.input : given;
    },
  };
  state.pending[childId] = pending;
  step.started.push(pending);
}

/**
 * A machine spawned or invoked: a child execution, planned as a step of the parent (effect id `loom.child`) whose
 * outcome is the child's output or error. Its id is derived from the parent's and the child id's occurrences.
 */
function spawnMachine(
  ctx: PlanContext,
  state: RuntimeState,
  step: Macrostep,
  childId: string,
  src: unknown,
  logic: AnyStateMachine,
  input: unknown,
  systemId?: string,
  syncSnapshot?: boolean,
): void {
  const occurrence = state.counters.get(childId) + 1;
  state.counters = state.counters.with(childId, occurrence);
  const spec: ChildSpec = {
    executionId: childExecutionId(ctx.executionId, childId, occurrence),
    logicId: logic.id,
    ...(typeof src === "string" ? { src } : {}),
    input: input ?? null,
    ...(systemId === undefined ? {} : { systemId }),
    ...(syncSnapshot ? { syncSnapshot: true } : {}),
  };
  const pending: PendingStep = {
    childId,
    stepId: `${ctx.machine.id}#${childId}:${occurrence}`,
    effectId: CHILD_EFFECT_ID,
    input: spec,
  };
  // The live run starts the very machine spawned (a spawn by logic object has no name to find it by again).
  Object.defineProperty(pending, "logic", { value: logic, enumerable: false });
  state.pending[childId] = pending;
  step.started.push(pending);
}

/** The execution a sendTo's resolved target stands for: the parent (its stand-in), or a running child execution. */
function messageTarget(state: RuntimeState, to: unknown): string | undefined {
  if (to === undefined || to === null) return undefined;
  if (to === parentRef()) return state.parent?.executionId;
  // A string: the id of a child spawned later in the macrostep (XState's deferred actor ids).
  const id = typeof to === "string" ? to : typeof to === "object" && "id" in to ? to.id : undefined;
  const pending = typeof id === "string" ? state.pending[id] : undefined;
  return pending && childSpecOf(pending)?.executionId;
}

// The children of a snapshot that still run under the runtime (a pending step, a live source) and have a systemId:
// those XState's system would still hold, registered again for system.get. Only those: a fan-out of 1,000 children
// without systemIds built a map of 1,000 refs for each of its 1,000 outcomes.
function runningChildren(state: RuntimeState): Record<string, AnyActorRef | undefined> | undefined {
  let running: Record<string, AnyActorRef | undefined> | undefined;
  const children: Record<string, AnyActorRef | undefined> = state.snapshot.children;
  for (const id in children) {
    const ref = children[id];
    if (ref && "systemId" in ref && typeof ref.systemId === "string" && (state.pending[id] || state.sources?.[id]))
      (running ??= {})[id] = ref;
  }
  return running;
}

// The refs system.get finds for the actors registered elsewhere in the tree (the execution's view from its start).
function treeRefs(system: TreeSystem | undefined): Record<string, AnyActorRef> | undefined {
  if (!system) return undefined;
  const refs: Record<string, AnyActorRef> = {};
  for (const [systemId, address] of Object.entries(system)) refs[systemId] = treeRef(systemId, address);
  return refs;
}

// ADR 0012 D4: the child machines a macrostep starts get the tree's registry as this execution sees it once the
// macrostep is planned (its own running children and live sources with a systemId, over what it inherited), so a
// child's system.get finds its parent's actors and its siblings, and a replay of the child derives the same.
function shareSystem(ctx: PlanContext, state: RuntimeState, step: Macrostep): void {
  const starting = step.started.map((pending) => childSpecOf(pending)).filter((spec) => spec !== undefined);
  if (starting.length === 0) return;
  let system: TreeSystem | undefined = state.parent?.system ? { ...state.parent.system } : undefined;
  for (const pending of Object.values(state.pending)) {
    const spec = childSpecOf(pending);
    if (spec?.systemId !== undefined) (system ??= {})[spec.systemId] = { executionId: spec.executionId };
  }
  for (const [childId, source] of Object.entries(state.sources ?? {}))
    if (source.systemId !== undefined)
      (system ??= {})[source.systemId] = { executionId: ctx.executionId, source: childId };
  if (!system) return;
  for (const pending of step.started) {
    const spec = childSpecOf(pending);
    if (spec) pending.input = { ...spec, system };
  }
}

// ADR 0012 D4: a systemId the rest of the tree holds is refused when this execution registers it again: XState's
// system (holding the tree's refs) throws, and the throw is told as the tree's (a duplicate within this execution's own
// children is XState's own error, as on XState).
function treeDuplicate(ctx: PlanContext, state: RuntimeState, thrown: unknown): unknown {
  const match = thrown instanceof Error ? /^Actor with system ID '(.*)' already exists\.$/.exec(thrown.message) : null;
  const holder = match ? state.parent?.system?.[match[1]!] : undefined;
  return holder ? new DuplicateSystemIdError(ctx.executionId, match![1]!, holder.executionId) : thrown;
}

// ADR 0012 D10: a macrostep starting more child machines than the fan-out allows throws, ending the execution in error.
function checkFanOut(ctx: PlanContext, actions: readonly CollectedAction[]): void {
  const max = ctx.maxFanOut ?? DEFAULT_CHILDREN_LIMITS.maxFanOut;
  let count = 0;
  for (const action of actions) {
    if (action.type !== "xstate.spawnChild" || typeof action.params !== "object" || action.params === null) continue;
    const ref: unknown = "actorRef" in action.params ? action.params.actorRef : undefined;
    if (typeof ref === "object" && ref !== null && "logic" in ref && isMachineLogic(ref.logic)) count++;
  }
  if (count > max) throw new ChildLimitError(ctx.executionId, "maxFanOut", count, max);
}

/** `sources` without `childId` (a new object: the previous state's is left as it was). */
function withoutSource(sources: Record<string, SourceSpec>, childId: string): Record<string, SourceSpec> {
  const { [childId]: _gone, ...rest } = sources;
  return rest;
}

/** The live source a sendTo's resolved target stands for (its child id), if any. */
function sourceTarget(state: RuntimeState, to: unknown): string | undefined {
  const id = typeof to === "string" ? to : typeof to === "object" && to !== null && "id" in to ? to.id : undefined;
  return typeof id === "string" && state.sources?.[id] ? id : undefined;
}

function isParentLink(value: unknown): value is ParentLink {
  return (
    typeof value === "object" &&
    value !== null &&
    "executionId" in value &&
    typeof value.executionId === "string" &&
    "childId" in value &&
    typeof value.childId === "string"
  );
}

/**
 * The id of a delayed event sent without one: `<event type>#<n>`, n counting such timers of that type (XState draws
 * a random id; this one a replay derives again), so two of one type are two timers. Counted in the counters under a
 * `loom.timer:` key, which no child id a machine names collides with in practice (the `loom.` prefix is the runtime's).
 */
function nextTimerId(state: RuntimeState, type: string): string {
  const key = `loom.timer:${type}`;
  const n = state.counters.get(key) + 1;
  state.counters = state.counters.with(key, n);
  return `${type}#${n}`;
}

/**
 * A TIMER_SET journaled before timers without ids were counted (`legacy`, keyed by its event type) where the
 * planner now derives `planned`: the macrostep keeps the logged id, so the log's EVENT_RECEIVED that fires it (and a
 * resume that re-arms it) name the same timer. True when it adopted it.
 */
export function adoptLegacyTimerId(step: Macrostep, planned: JournalRecord, legacy: StoredRecord): boolean {
  if (planned.type !== schema.TIMER_SET || legacy.type !== schema.TIMER_SET) return false;
  const old = legacy.timerId;
  if (typeof old !== "string" || planned.event.type !== old || !planned.timerId.startsWith(`${old}#`)) return false;
  const timer = step.state.timers[planned.timerId];
  delete step.state.timers[planned.timerId];
  if (timer) step.state.timers[old] = timer;
  step.armed = step.armed.map((id) => (id === planned.timerId ? old : id));
  planned.timerId = old;
  return true;
}

function isSerialized(value: unknown): value is SerializedError {
  return (
    typeof value === "object" &&
    value !== null &&
    !(value instanceof Error) &&
    "message" in value &&
    typeof value.message === "string"
  );
}

// The XState event an input record delivers (exhaustive: a new input type does not compile without its case).
function eventOf(ctx: PlanContext, state: RuntimeState, input: MacrostepInput): AnyEventObject {
  switch (input.type) {
    case schema.EXECUTION_STARTED:
      return { type: "xstate.init", input: input.input };
    case schema.EVENT_RECEIVED: {
      const event: unknown = input.event;
      if (!isEventObject(event)) {
        throw new NonDeterminismError(
          ctx.executionId,
          input.seq,
          "an event record holding",
          event ?? null,
          "an event: an object with a string type",
        );
      }
      if (typeof input.timerId === "string") delete state.timers[input.timerId];
      const from: unknown = input.from;
      if (typeof from === "object" && from !== null && "executionId" in from && "messageId" in from)
        state.inbox = { ...state.inbox, [String(from.executionId)]: String(from.messageId) };
      // A live source's done or error event: it finished, and is not started again by a resume.
      if (typeof from === "object" && from !== null && "source" in from && typeof from.source === "string") {
        const id = from.source;
        if (state.sources?.[id] && /^xstate\.(done|error)\.actor\./.test(event.type))
          state.sources = withoutSource(state.sources, id);
      }
      return event;
    }
    case schema.STEP_COMPLETED:
    case schema.STEP_FAILED: {
      const pending = Object.values(state.pending).find((p) => p.stepId === input.stepId);
      if (!pending) {
        throw new NonDeterminismError(ctx.executionId, input.seq, "an outcome for step", input.stepId, {
          pendingSteps: Object.values(state.pending).map((p) => p.stepId),
        });
      }
      // The record names the effect its outcome came from: served to a step that now invokes another effect (a
      // changed `src`, an agent's new model effect id), it would be the old effect's answer, silently.
      if (typeof input.effectId === "string" && input.effectId !== pending.effectId) {
        throw new NonDeterminismError(
          ctx.executionId,
          input.seq,
          "an outcome of",
          { stepId: input.stepId, effectId: input.effectId },
          { stepId: pending.stepId, effectId: pending.effectId },
        );
      }
      delete state.pending[pending.childId];
      return input.type === schema.STEP_COMPLETED
        ? { type: `xstate.done.actor.${pending.childId}`, output: input.output, actorId: pending.childId }
        : { type: `xstate.error.actor.${pending.childId}`, error: input.error, actorId: pending.childId };
    }
    default: {
      const record: StoredRecord = input;
      throw new NonDeterminismError(
        ctx.executionId,
        record.seq,
        "a record of type",
        record.type,
        "an input record (event, step outcome or start)",
      );
    }
  }
}

/**
 * The facts of a record that replay must reproduce (everything the planner derives, not the clock).
 * `inputDigest` is compared only where the journal has one (logs from before it was journaled lack it).
 */
export function plannedFacts(record: StoredRecord): unknown {
  switch (record.type) {
    case schema.TIMER_SET:
      return { type: record.type, timerId: record.timerId, dueAt: record.dueAt };
    case schema.TRANSITION:
      return {
        type: record.type,
        from: record.from,
        to: record.to,
        event: record.event,
        ...(record.inputDigest === undefined ? {} : { inputDigest: record.inputDigest }),
        ...(record.contextDigest === undefined ? {} : { contextDigest: record.contextDigest }),
      };
    case schema.EXECUTION_ENDED:
      return { type: record.type, status: record.status };
    default:
      return { type: record.type };
  }
}

/**
 * The digest of a snapshot's context (ADR 0012 D8): of its JSON text (actor refs as XState's `toJSON` writes
 * them, their id); a context JSON cannot hold digests as "unjsonable", so it never fails a macrostep.
 */
export function contextDigestOf(snapshot: AnyMachineSnapshot): string {
  try {
    return digestOf(snapshot.context ?? null);
  } catch {
    return "unjsonable";
  }
}

/** FNV-1a (32-bit) of a value's JSON text: a cheap, synchronous fingerprint, not a cryptographic one. */
export function digestOf(value: unknown): string {
  return fnv1a32(JSON.stringify(value) ?? "null")
    .toString(16)
    .padStart(8, "0");
}

/** The persisted, JSON-safe form of a runtime state (XState children are the runtime's pending steps). */
export function persistState(machine: AnyStateMachine, state: RuntimeState): unknown {
  return {
    ...persistMachine(machine, state.snapshot),
    pending: state.pending,
    timers: state.timers,
    counters: state.counters.toJSON(),
    status: state.status,
    ...(state.output === undefined ? {} : { output: state.output }),
    ...(state.error ? { error: state.error } : {}),
    ...(state.patches ? { patches: state.patches } : {}),
    ...(state.parent ? { parent: state.parent } : {}),
    ...(state.outbox?.length ? { outbox: state.outbox } : {}),
    ...(state.inbox ? { inbox: state.inbox } : {}),
    ...(state.stoppedChildren ? { stoppedChildren: state.stoppedChildren } : {}),
    ...(state.sources && Object.keys(state.sources).length ? { sources: state.sources } : {}),
  };
}

/** Rebuilds a runtime state from `persistState` output without starting anything. */
export function restoreState(machine: AnyStateMachine, persisted: unknown): RuntimeState {
  const p = persisted as Omit<RuntimeState, "snapshot"> & { machine: unknown; plainContext?: unknown };
  const snapshot = restoreMachine(machine, p.machine, p.plainContext);
  // A persisted snapshot holds no children: each running child execution gets a ref back, so the machine's
  // sendTo(childId) and the stop of its invoking state resolve as they did before the snapshot.
  for (const pending of Object.values(p.pending ?? {})) {
    const spec = childSpecOf(pending);
    if (!spec || snapshot.children[pending.childId]) continue;
    snapshot.children = {
      ...snapshot.children,
      [pending.childId]: restoredChildRef(pending.childId, spec.src ?? spec.logicId, spec.systemId),
    };
  }
  for (const [childId, source] of Object.entries(p.sources ?? {})) {
    if (snapshot.children[childId]) continue;
    snapshot.children = {
      ...snapshot.children,
      [childId]: restoredChildRef(childId, source.src ?? childId, source.systemId),
    };
  }
  return {
    snapshot,
    pending: p.pending ?? {},
    timers: p.timers ?? {},
    counters: Counters.from(p.counters),
    status: p.status ?? "running",
    ...(p.output === undefined ? {} : { output: p.output }),
    ...(p.error ? { error: p.error } : {}),
    ...(p.patches ? { patches: p.patches } : {}),
    ...(p.parent ? { parent: p.parent } : {}),
    ...(p.outbox?.length ? { outbox: p.outbox } : {}),
    ...(p.inbox ? { inbox: p.inbox } : {}),
    ...(p.stoppedChildren ? { stoppedChildren: p.stoppedChildren } : {}),
    ...(p.sources ? { sources: p.sources } : {}),
  };
}
