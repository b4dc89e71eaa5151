// The macrostep planner: a pure function from (runtime state, input record) to the next state and the
// records to journal. Live runs and replays share it, so what replay checks is exactly what was written.
import { type AnyEventObject, type AnyMachineSnapshot, type AnyStateMachine, type EventObject } from "xstate";
import { isStepInput, LOOM_STEP } from "../../machines/helpers/effectActor.js";
import { taskKindOf, type TaskKind } from "../../machines/helpers/invokeAs.js";
import { fnv1a32 } from "../../stores/bytes.js";
import * as schema from "../../stores/schema.js";
import { transitionValueText } from "../../stores/recordFormat.js";
import { isEventObject } from "../../stores/shapes.js";
import type { ExecutionStatus, JournalRecord, MacrostepInput, RecordBody, StoredRecord } from "../../stores/types.js";

export type { ExecutionStatus };
import { NonDeterminismError, serializeError, type SerializedError } from "../errors.js";
import { withPatchScope } from "../../machines/helpers/patches.js";
import { macrostepPatches, type PatchDecisions } from "./patches.js";
import { dropFinishedChildren, pureInitialTransition, pureTransition } from "../pureTransition.js";
import { Counters } from "./counters.js";
import { isLiveAction, type CollectedAction } from "./liveActions.js";
import { persistMachine, restoreMachine } from "./machineSnapshot.js";

/** An effect invocation that has started and has no journaled outcome yet. */
export interface PendingStep {
  childId: string;
  stepId: string;
  effectId: string;
  input: unknown;
  /** The role the machine invoked the effect in (`invokeAs`); absent means the registered effect's kind. */
  taskKind?: TaskKind;
}

/** A delayed event due at `dueAt` (from the record that armed it, so replay re-arms the same time). */
export interface PendingTimer {
  dueAt: number;
  event: EventObject;
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
}

export interface PlanContext {
  machine: AnyStateMachine;
  executionId: string;
  effectIds: ReadonlySet<string>;
  /** Journal a digest of the context in each TRANSITION (`execution.checkDeterminism`). */
  checkDeterminism?: boolean;
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
  const event = eventOf(ctx, state, input);
  const records: JournalRecord[] = [input];
  const step: Macrostep = { state, records, event, started: [], stopped: [], armed: [], cancelled: [], actions: [] };
  let seq = input.seq;
  const push = (record: RecordBody) => records.push({ seq: ++seq, at: input.at, ...record });

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
      return previous ? pureTransition(machine, previous.snapshot, event) : pureInitialTransition(machine, input.input);
    });
    markPatches();
  } catch (thrown) {
    markPatches();
    const error = isSerialized(thrown) ? thrown : serializeError(thrown);
    state.status = "error";
    state.error = error;
    for (const childId of Object.keys(state.pending)) step.stopped.push(childId);
    state.pending = {};
    state.timers = {};
    push({ type: schema.EXECUTION_ENDED, status: "error", error });
    return step;
  }

  for (const action of actions) {
    if (isLiveAction(action)) {
      step.actions.push(action);
      continue;
    }
    const params = (action.params ?? {}) as Record<string, any>;
    switch (action.type) {
      case "xstate.spawnChild": {
        const src = params.src;
        if (typeof src !== "string" || !ctx.effectIds.has(src)) break;
        const childId = String(params.id);
        const occurrence = state.counters.get(childId) + 1;
        // One entry per child id ever spawned: a new version per spawn, the previous state's left as it was.
        state.counters = state.counters.with(childId, occurrence);
        const given: unknown = params.input;
        const named = isStepInput(given);
        const stepId = `${machine.id}#${named ? given[LOOM_STEP] : `${childId}:${occurrence}`}`;
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
        break;
      }
      case "xstate.stopChild": {
        const childId = typeof params.actorRef === "string" ? params.actorRef : params.actorRef?.id;
        if (childId && state.pending[childId]) {
          delete state.pending[childId];
          step.stopped.push(childId);
        }
        break;
      }
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
    step.stopped.push(...Object.keys(state.pending));
    state.pending = {};
    state.timers = {};
    push({
      type: schema.EXECUTION_ENDED,
      status: "done",
      ...(next.output === undefined ? {} : { output: next.output }),
    });
  } else if (next.status === "error") {
    state.status = "error";
    state.error = serializeError(next.error);
    push({ type: schema.EXECUTION_ENDED, status: "error", error: state.error });
  }
  return step;
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
  };
}

/** Rebuilds a runtime state from `persistState` output without starting anything. */
export function restoreState(machine: AnyStateMachine, persisted: unknown): RuntimeState {
  const p = persisted as Omit<RuntimeState, "snapshot"> & { machine: unknown; plainContext?: unknown };
  return {
    snapshot: restoreMachine(machine, p.machine, p.plainContext),
    pending: p.pending ?? {},
    timers: p.timers ?? {},
    counters: Counters.from(p.counters),
    status: p.status ?? "running",
    ...(p.output === undefined ? {} : { output: p.output }),
    ...(p.error ? { error: p.error } : {}),
    ...(p.patches ? { patches: p.patches } : {}),
  };
}
