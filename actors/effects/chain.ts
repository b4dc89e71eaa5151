// The path every live effect step takes, outside in (ADR 0140 D5): kill switch -> claim-check slot ->
// secret redaction -> the capability ring -> each execution.effectMiddleware entry -> the effect.
// Each step walks the effectChain machine (machines/effectChain.ts) with XState's pure transition(),
// so the innermost layer a failed step reached is journaled as STEP_FAILED.stoppedAt. Replay never
// runs the chain: a recorded step is served from the log.
import { initialTransition, transition, type SnapshotFrom } from "xstate";
import { CHAIN_LAYERS, effectChain, type ChainLayer, type ChainOutcome, type EffectChainEvent } from "../../machines/effectChain.js";
import type { Usage } from "../../machines/helpers/messages.js";
import { LoomworkError } from "../../stores/errors.js";
import type { JournalRecord } from "../../stores/types.js";
import { loopHooksOf } from "../agents/agentLoop.js";
import type { RuntimeBus } from "../bus.js";
import { capabilityRing, Meter, type RingContext } from "./capabilities.js";
import { AGENT_TOOL_STEP } from "./claimCheck.js";
import { realClock, type Clock } from "../clock.js";
import type { LoomConfig, RedactOption } from "../config.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";
import type { Effect, EffectContext, EffectMiddleware } from "./effect.js";
import { NonJsonOutputError, serializeError, UnknownEffectError, type SerializedError } from "../errors.js";
import type { Execution } from "../journal/execution.js";
import type { JournalCodec } from "../journal/journal.js";
import { plainJson } from "../journal/json.js";
import type { PendingStep } from "../journal/planner.js";
import { LOOM_INVOKED_AS, type TaskKind } from "../../machines/helpers/invokeAs.js";
import { LOOM_CLOCK, type Next } from "./retry.js";

/** The step was refused by the kill switch (global, or `app.stop` of its execution); it reached no inner layer. */
export class EffectStoppedError extends LoomworkError {
  readonly stepId: string;
  constructor(stepId: string, reason: string) {
    super(RUNTIME_ERROR_CODES.effectStopped, `Step "${stepId}" was stopped before it ran: ${reason}.`);
    this.stepId = stepId;
  }
}

/** The execution id `invokeTransient` calls carry: they belong to no execution and are never journaled. */
export const TRANSIENT_EXECUTION_ID = "loom:transient";

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
    readonly stoppedAt: ChainLayer,
    readonly outcome: ChainOutcome,
  ) {}
}

/** The output and record facts of a step's result (a bare value is an output without facts). */
export function unwrapStepResult(result: unknown): { output: unknown; usage?: Usage } {
  return result instanceof StepResult ? { output: result.output, ...(result.usage ? { usage: result.usage } : {}) } : { output: result };
}

/** The fields of a STEP_FAILED record for what a step threw: `stoppedAt` (when the chain ran) and the plain error. */
export function failedFields(thrown: unknown): { stoppedAt?: ChainLayer; error: SerializedError } {
  return thrown instanceof StepFailure ? { stoppedAt: thrown.stoppedAt, error: serializeError(thrown.error) } : { error: serializeError(thrown) };
}

/** The global kill switch: while engaged, every new step (and every transient call) is stopped at the first layer. */
export class KillSwitch {
  private why: string | undefined;

  /** Stops every step that has not yet reached its effect; running effects finish (stop an execution to abort them). */
  engage(reason = "the kill switch is engaged"): void {
    this.why = reason;
  }

  release(): void {
    this.why = undefined;
  }

  get engaged(): boolean {
    return this.why !== undefined;
  }

  /** Why it is engaged, while it is. */
  get reason(): string | undefined {
    return this.why;
  }
}

type ChainSnapshot = SnapshotFrom<typeof effectChain>;

/** One step's walk through the effectChain machine: pure transitions, no actor, no timers. */
export class ChainTrace {
  private snapshot: ChainSnapshot = initialTransition(effectChain)[0];
  private depth = 0;

  /** The layer the step is in (the innermost it reached). */
  get layer(): ChainLayer {
    return CHAIN_LAYERS[this.depth]!;
  }

  /** The machine's state: a layer while running, then the outcome. */
  get state(): string {
    return String(this.snapshot.value);
  }

  /** The step entered `layer`: PASS through every layer before it (unconfigured layers pass at once). */
  reach(layer: ChainLayer): void {
    const target = CHAIN_LAYERS.indexOf(layer);
    while (this.depth < target && this.snapshot.status === "active") {
      this.snapshot = transition(effectChain, this.snapshot, { type: "PASS" })[0];
      this.depth++;
    }
  }

  /** Ends the walk with `event` (FAIL where the layer does not take it); returns the outcome and where it stopped. */
  finish(event: EffectChainEvent): { outcome: ChainOutcome; stoppedAt: ChainLayer } {
    const stoppedAt = this.layer;
    if (this.snapshot.status === "active") {
      const accepted = this.snapshot.can(event) ? event : this.snapshot.can({ type: "FAIL" }) ? ({ type: "FAIL" } as const) : undefined;
      if (accepted) this.snapshot = transition(effectChain, this.snapshot, accepted)[0];
    }
    const value = String(this.snapshot.value);
    const outcome = (this.snapshot.status === "done" ? value : event.type === "RESOLVE" ? "completed" : "failed") as ChainOutcome;
    return { outcome, stoppedAt };
  }
}

/** The chain event for what a step threw, by the error's stable code. */
export function chainEventFor(error: unknown): EffectChainEvent {
  switch ((error as { code?: unknown } | null)?.code) {
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

interface Entry {
  layer: ChainLayer;
  run: EffectMiddleware;
}

type Run = (ctx: EffectContext, input: unknown) => Promise<unknown>;

function settle(fn: () => unknown): Promise<unknown> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(error);
  }
}

export interface EffectRuntimeOptions {
  /** The app clock: stamps durations, and drives retry backoff and timeouts. */
  clock?: Clock;
  /** Reads an execution's journal (quotas and `usage` count from it). */
  readLog?: (executionId: string) => Promise<JournalRecord[]>;
}

export class EffectRuntime {
  codec: JournalCodec | undefined;
  /** The claim-check layer, when execution.claimCheck is configured (filled by the claim-check module). */
  claimCheck: EffectMiddleware | undefined;
  readonly killSwitch = new KillSwitch();
  /** Per-execution model usage, derived from the journal. */
  readonly meter: Meter;
  private readonly stopped = new Map<string, string>();
  /** The signals of each execution's steps still in the chain, so `app.stop` aborts them at once. */
  private readonly live = new Map<string, Set<AbortController>>();
  private readonly clock: Clock;
  private readonly redaction: EffectMiddleware | undefined;
  private transientCalls = 0;

  constructor(
    private readonly config: LoomConfig,
    private readonly bus: RuntimeBus,
    options: EffectRuntimeOptions = {},
  ) {
    this.clock = options.clock ?? config.clock ?? realClock;
    this.redaction = config.security?.redact ? redactionLayer(config.security.redact) : undefined;
    const readLog = options.readLog ?? (() => Promise.resolve([]));
    this.meter = new Meter(bus, readLog, (effectId) => config.effects[effectId]?.kind === "llm");
    bus.on("ended", ({ executionId }) => this.stopped.delete(executionId));
  }

  /** The user middleware list as the chain runs it (empty when none is configured). */
  get middleware(): EffectMiddleware[] {
    return [...(this.config.execution?.effectMiddleware ?? [])];
  }

  /**
   * From now on, no step of the execution enters another layer, and the signals of its running steps are
   * aborted (`app.stop`; the journaled stop follows, so none of their outcomes will be journaled).
   */
  stopExecution(executionId: string, reason: string): void {
    this.stopped.set(executionId, reason);
    for (const controller of this.live.get(executionId) ?? []) controller.abort(new Error(`execution "${executionId}" was stopped (${reason})`));
  }

  /**
   * The role the machine invoked the step in: what `invokeAs` said (agentLoop$ invokes every tool call as
   * "tool"), else an agentLoop$ tool frame restored from a state journaled before it said so, else nothing.
   */
  private declaredRole(execution: Execution, pending: PendingStep): TaskKind | undefined {
    if (pending.taskKind) return pending.taskKind;
    const machine = execution.machine;
    return loopHooksOf(machine) && pending.stepId.startsWith(`${machine.id}#`) && AGENT_TOOL_STEP.test(pending.stepId) ? "tool" : undefined;
  }

  /** A signal that aborts with the execution's, or when the execution is stopped; tracked while the step runs. */
  private stepSignal(executionId: string, signal: AbortSignal): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    const forward = () => controller.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener("abort", forward, { once: true });
    const live = this.live.get(executionId) ?? new Set<AbortController>();
    live.add(controller);
    this.live.set(executionId, live);
    return {
      signal: controller.signal,
      done: () => {
        live.delete(controller);
        if (live.size === 0 && this.live.get(executionId) === live) this.live.delete(executionId);
      },
    };
  }

  /** Runs one journaled step live through the chain; resolves a StepResult, rejects with a StepFailure. */
  async run(execution: Execution, pending: PendingStep, signal: AbortSignal): Promise<StepResult> {
    const effect = this.config.effects[pending.effectId]!;
    const invokedAs = this.declaredRole(execution, pending);
    // Once this signal is aborted the step is abandoned: the execution journals none of its outcome.
    const step = this.stepSignal(execution.executionId, signal);
    const ctx = this.context(
      {
        executionId: execution.executionId,
        stepId: pending.stepId,
        effectId: pending.effectId,
        taskKind: invokedAs ?? effect.kind,
        ...(execution.subject === undefined ? {} : { subject: execution.subject }),
        attempt: 1,
        idempotencyKey: `${execution.executionId}/${pending.stepId}`,
        signal: step.signal,
      },
      invokedAs,
    );
    let usage: Usage | undefined;
    const ring: RingContext = {
      logicId: execution.machine.id,
      journaled: true,
      isModel: effect.kind === "llm",
      meter: this.meter,
      onUsage: (u) => (usage = u),
    };
    const trace = new ChainTrace();
    const started = this.clock.now();
    const report = (ok: boolean, outcome: ChainOutcome, stoppedAt?: ChainLayer) =>
      this.bus.emit("step", {
        executionId: ctx.executionId,
        stepId: ctx.stepId,
        effectId: ctx.effectId,
        ok,
        outcome,
        durationMs: this.clock.now() - started,
        ...(usage ? { usage } : {}),
        ...(stoppedAt ? { stoppedAt } : {}),
      });
    try {
      const output = await this.compose(this.entries(ring), effect, trace)(ctx, pending.input);
      report(true, trace.finish({ type: "RESOLVE" }).outcome);
      return new StepResult(output, usage);
    } catch (error) {
      const { outcome, stoppedAt } = trace.finish(chainEventFor(error));
      report(false, outcome, stoppedAt);
      throw new StepFailure(error, stoppedAt, outcome);
    } finally {
      step.done();
    }
  }

  /**
   * Runs an effect outside any journal: never claim-checked, never recorded, no grants, quotas or
   * metering (there is no execution); the kill switch, redaction, guardRequest, retry, timeout and
   * the user middleware apply. Rejects with the effect's own (typed) error.
   */
  invokeTransient(effectId: string, input: unknown, options: { signal?: AbortSignal; subject?: string } = {}): Promise<unknown> {
    const effect = this.config.effects[effectId];
    if (!effect) return Promise.reject(new UnknownEffectError("(invokeTransient)", effectId, Object.keys(this.config.effects)));
    const n = ++this.transientCalls;
    const ctx = this.context({
      executionId: TRANSIENT_EXECUTION_ID,
      stepId: `transient:${effectId}:${n}`,
      effectId,
      taskKind: effect.kind,
      ...(options.subject === undefined ? {} : { subject: options.subject }),
      attempt: 1,
      idempotencyKey: `${TRANSIENT_EXECUTION_ID}/${effectId}/${globalThis.crypto.randomUUID()}`,
      signal: options.signal ?? new AbortController().signal,
    });
    const ring: RingContext = { logicId: "", journaled: false, isModel: effect.kind === "llm", meter: this.meter, onUsage: () => undefined };
    return this.compose(this.entries(ring), effect, new ChainTrace())(ctx, input);
  }

  /** The configured layers, outside in, each tagged with its chain state. */
  private entries(call: RingContext): Entry[] {
    return [
      { layer: "killSwitch", run: this.killSwitchLayer },
      ...(call.journaled && this.claimCheck ? [{ layer: "claimCheck" as const, run: this.claimCheck }] : []),
      ...(this.redaction ? [{ layer: "redaction" as const, run: this.redaction }] : []),
      ...capabilityRing(this.config.capabilities, call).map((run) => ({ layer: "capabilities" as const, run })),
      ...this.middleware.map((run) => ({ layer: "middleware" as const, run })),
    ];
  }

  /**
   * Composes the layers around the effect: one explicit reduce, Dexie-style. Entering a layer moves the
   * trace inward; every `next` first checks the kill switch, so a stopped step reaches no inner layer.
   */
  private compose(entries: Entry[], effect: Effect, trace: ChainTrace): Run {
    const innermost: Run = (ctx, input) => {
      trace.reach("effect");
      return settle(() => effect.run(input, ctx));
    };
    return entries.reduceRight<Run>(
      (inner, entry) => (ctx, input) => {
        trace.reach(entry.layer);
        const next: Next = (nextInput, nextCtx = ctx) =>
          settle(() => {
            this.assertRunning(nextCtx);
            return inner(nextCtx, nextInput);
          });
        return settle(() => entry.run(ctx, input, next));
      },
      innermost,
    );
  }

  // Beside the clock, the role the machine declared (none for a plain invoke, whose taskKind is only the effect's
  // kind): the claim-check preset offloads only steps declared as tool frames (ADR 0140 D9).
  private context(ctx: EffectContext, invokedAs?: TaskKind): EffectContext {
    return Object.assign(ctx, { [LOOM_CLOCK]: this.clock }, invokedAs ? { [LOOM_INVOKED_AS]: invokedAs } : {});
  }

  private assertRunning(ctx: EffectContext): void {
    const reason = this.stopReason(ctx);
    if (reason !== undefined) throw new EffectStoppedError(ctx.stepId, reason);
  }

  private stopReason(ctx: EffectContext): string | undefined {
    if (this.killSwitch.engaged) return `the kill switch is engaged (${this.killSwitch.reason})`;
    const stopped = this.stopped.get(ctx.executionId);
    if (stopped !== undefined) return `execution "${ctx.executionId}" was stopped (${stopped})`;
    if (ctx.signal.aborted) return "its signal was aborted (the execution stopped, or the state that invoked it was left)";
    return undefined;
  }

  private readonly killSwitchLayer: EffectMiddleware = (ctx, input, next) => {
    this.assertRunning(ctx);
    return next(input);
  };
}

/** The text scrubber for a `security.redact` option: every match becomes "[REDACTED]". */
export function redactor(option: RedactOption): (text: string) => string {
  if (typeof option === "function") return option;
  const patterns = option.map((p) => (typeof p === "string" ? p : new RegExp(p.source, p.flags.includes("g") ? p.flags : `${p.flags}g`)));
  return (text) => patterns.reduce<string>((t, p) => (typeof p === "string" ? (p === "" ? t : t.replaceAll(p, "[REDACTED]")) : t.replace(p, "[REDACTED]")), text);
}

/**
 * Scrubs every string (keys included) of a result, deeply and as JSON would see it, before anything
 * outside it (the claim-check, the journal, any store) sees it; an error's message and string facts
 * are scrubbed in place. The layers inside it (the ring, user middleware) see the real result.
 */
export function redactionLayer(option: RedactOption): EffectMiddleware {
  const scrub = redactor(option);
  const walk = (value: unknown, ancestors: object[]): unknown => {
    if (typeof value === "string") return scrub(value);
    if (typeof value !== "object" || value === null || ancestors.includes(value)) return value;
    const json = (value as { toJSON?: unknown }).toJSON;
    if (typeof json === "function") return walk(json.call(value), ancestors);
    const inner = [...ancestors, value];
    if (Array.isArray(value)) return value.map((v) => walk(v, inner));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k), walk(v, inner)]));
  };
  const scrubError = (error: unknown): unknown => {
    if (typeof error === "string") return scrub(error);
    if (!(error instanceof Error)) return walk(error, []);
    try {
      error.message = scrub(error.message);
      for (const [key, value] of Object.entries(error)) if (typeof value === "string") (error as unknown as Record<string, unknown>)[key] = scrub(value);
      if (typeof error.stack === "string") error.stack = scrub(error.stack);
    } catch {
      // A frozen error cannot be scrubbed in place: journal a plain copy instead.
      return Object.assign(new Error(scrub(error.message)), { name: error.name });
    }
    return error;
  };
  return async (ctx, input, next) => {
    let output: unknown;
    try {
      output = await next(input);
    } catch (error) {
      throw scrubError(error);
    }
    // Checked as the journal checks it first (a Map, NaN, a typed array refused with the path, never
    // turned into {} or null by the walk), then scrubbed: what the walk sees is plain JSON.
    return walk(plainJson(output, (reason) => new NonJsonOutputError(ctx.stepId, reason)), []);
  };
}
