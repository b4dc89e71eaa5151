// One live step's walk through the effectChain machine (machines/effectChain.ts), and what the walk adds
// to the step's outcome record: the runtime moves the walk inward as the step enters each layer, then
// ends it with what the chain resolved or threw. Pure transitions: no actor, no timers.
import type { SnapshotFrom } from "xstate";
import { pureInitialTransition as initialTransition, pureTransition as transition } from "../pureTransition.js";
import {
  CHAIN_LAYERS,
  CHAIN_OUTCOMES,
  effectChain,
  type ChainLayer,
  type ChainOutcome,
  type EffectChainEvent,
} from "../../machines/effectChain.js";
import type { Usage } from "../../machines/helpers/messages.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";
import { serializeError, type SerializedError } from "../errors.js";

/** A live step's output with what the chain adds to its STEP_COMPLETED record. */
export class StepResult {
  constructor(
    readonly output: unknown,
    readonly usage?: Usage,
  ) {}
}

/** A live step's error with where it stopped in the chain (STEP_FAILED.stoppedAt). */
export class StepFailure {
  constructor(
    readonly error: unknown,
    readonly stoppedAt: ChainLayer | undefined,
    readonly outcome: ChainOutcome,
  ) {}
}

/** The output and record facts of a step's result (a bare value is an output without facts). */
export function unwrapStepResult(result: unknown): { output: unknown; usage?: Usage } {
  return result instanceof StepResult
    ? { output: result.output, ...(result.usage ? { usage: result.usage } : {}) }
    : { output: result };
}

/** The fields of a STEP_FAILED record for what a step threw: `stoppedAt` (when the chain ran) and the plain error. */
export function failedFields(thrown: unknown): { stoppedAt?: ChainLayer; error: SerializedError } {
  if (!(thrown instanceof StepFailure)) return { error: serializeError(thrown) };
  return { ...(thrown.stoppedAt ? { stoppedAt: thrown.stoppedAt } : {}), error: serializeError(thrown.error) };
}

/** The chain event for what a step threw, by the error's stable code (the machine decides what it means where the step was). */
export function chainEventFor(error: unknown): EffectChainEvent {
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
  switch (code) {
    case RUNTIME_ERROR_CODES.effectStopped:
      return { type: "STOP" };
    case RUNTIME_ERROR_CODES.grantDenied:
    case RUNTIME_ERROR_CODES.quotaExceeded:
    case RUNTIME_ERROR_CODES.guardRefused:
      return { type: "REFUSE" };
    case RUNTIME_ERROR_CODES.effectTimeout:
      return { type: "TIMEOUT" };
    default:
      return { type: "FAIL" };
  }
}

function isChainOutcome(state: string): state is ChainOutcome {
  return CHAIN_OUTCOMES.some((outcome) => outcome === state);
}

/** How a walk ended: the machine's final state, and (unless it completed) the innermost layer it reached. */
export interface ChainEnd {
  outcome: ChainOutcome;
  stoppedAt?: ChainLayer;
}

/** One step's walk through the effectChain machine, as a live walk: every layer takes every ending. */
type ChainSnapshot = SnapshotFrom<typeof effectChain>;

// The walk is a pure function of (snapshot, event type): the machine's events carry no data and its input is
// fixed. So each transition is computed once per process and shared by every step's walk (snapshots are immutable).
const START: ChainSnapshot = initialTransition(effectChain, { live: true })[0];
const walked = new WeakMap<ChainSnapshot, Map<EffectChainEvent["type"], ChainSnapshot>>();

function next(snapshot: ChainSnapshot, event: EffectChainEvent): ChainSnapshot {
  let edges = walked.get(snapshot);
  if (!edges) walked.set(snapshot, (edges = new Map()));
  let target = edges.get(event.type);
  if (!target) edges.set(event.type, (target = transition(effectChain, snapshot, { type: event.type })[0]));
  return target;
}

const PASS: EffectChainEvent = { type: "PASS" };
/** Each layer's rank, outside in; any other state value (an outcome) ranks -1. */
const RANK = new Map<unknown, number>(CHAIN_LAYERS.map((layer, i) => [layer, i]));

export class ChainTrace {
  private snapshot = START;

  /** The step entered `layer`: PASS through every layer before it (unconfigured layers pass at once). */
  reach(layer: ChainLayer): void {
    const target = RANK.get(layer) ?? -1;
    while (this.snapshot.status === "active" && (RANK.get(this.snapshot.value) ?? -1) < target) {
      this.snapshot = next(this.snapshot, PASS);
    }
  }

  /** Ends the walk with `event`: the machine's final state is the outcome. */
  finish(event: EffectChainEvent): ChainEnd {
    this.snapshot = next(this.snapshot, event);
    const state = String(this.snapshot.value);
    // A live walk takes every ending in every layer (spec/effects/chainWalk.test.ts walks them all).
    if (!isChainOutcome(state)) throw new Error(`effectChain: a live walk in "${state}" took no ${event.type}`);
    const { stoppedAt } = this.snapshot.context;
    return { outcome: state, ...(stoppedAt ? { stoppedAt } : {}) };
  }
}
