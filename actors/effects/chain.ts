// The path every live effect step takes, outside in (ADR 0140 D5): kill switch -> claim-check slot ->
// secret redaction -> the capability ring -> each execution.effectMiddleware entry -> the effect.
// Each step walks the effectChain machine (machines/effectChain.ts, through ./trace.ts), so the
// innermost layer a failed step reached is journaled as STEP_FAILED.stoppedAt. Replay never runs the
// chain: a recorded step is served from the log.
import type { Usage } from "../../machines/helpers/messages.js";
import type { TaskKind } from "../../machines/helpers/invokeAs.js";
import type { ChainLayer } from "../../machines/effectChain.js";
import type { JournalRecord } from "../../stores/types.js";
import type { RuntimeBus, Warning } from "../bus.js";
import { realClock, type Clock } from "../clock.js";
import type { LoomConfig } from "../config.js";
import { UnknownEffectError } from "../errors.js";
import { declarationOf } from "../logicDeclaration.js";
import type { StepCall } from "../journal/host.js";
import { capabilityRing, type RingContext } from "./capabilities.js";
import type { Effect, EffectContext, EffectMiddleware, ModelDelta, Next } from "./effect.js";
import { EffectStoppedError, KillSwitch } from "./layers.js";
import { Meter } from "./meter.js";
import { redactionLayer } from "./redaction.js";
import { ChainTrace, chainEventFor, StepFailure, StepResult, type ChainEnd } from "./trace.js";

export { EffectStoppedError, KillSwitch } from "./layers.js";
export { failedFields, StepFailure, StepResult, unwrapStepResult } from "./trace.js";

/** The execution id `invokeTransient` calls carry: they belong to no execution and are never journaled. */
export const TRANSIENT_EXECUTION_ID = "loom:transient";

interface Entry {
  layer: ChainLayer;
  run: EffectMiddleware;
}

type Run = (ctx: EffectContext, input: unknown) => Promise<unknown>;

// `fn()` as a promise: a synchronous throw becomes a rejection, as `Promise.try` (ES2025) does.
function promiseTry(fn: () => unknown): Promise<unknown> {
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
  /** The app's warning path (a reply without usage under a token quota). */
  warn?: (warning: Warning) => void;
}

export class EffectRuntime {
  /** The claim-check layer, when execution.claimCheck is configured (filled by the claim-check module). */
  claimCheck: EffectMiddleware | undefined;
  readonly killSwitch = new KillSwitch();
  /** Per-execution model usage, derived from the journal. */
  readonly meter: Meter;
  private readonly stopped = new Map<string, string>();
  /** How to abort each execution's steps still in the chain, so `app.stop` aborts them at once. */
  private readonly live = new Map<string, Set<(reason: unknown) => void>>();
  private readonly clock: Clock;
  private readonly redaction: EffectMiddleware | undefined;
  private transientCalls = 0;

  constructor(
    private readonly config: LoomConfig,
    private readonly bus: RuntimeBus,
    options: EffectRuntimeOptions = {},
  ) {
    this.clock = options.clock ?? config.clock ?? realClock;
    const redact = config.security?.redact;
    this.redaction = redact ? redactionLayer(redact) : undefined;
    const readLog = options.readLog ?? (() => Promise.resolve([]));
    this.meter = new Meter(bus, readLog, (effectId) => config.effects[effectId]?.kind === "llm", options.warn);
    bus.on("ended", ({ executionId }) => this.stopped.delete(executionId));
  }

  /**
   * From now on, no step of the execution enters another layer, and the signals of its running steps are
   * aborted (`app.stop`; the journaled stop follows, so none of their outcomes will be journaled).
   */
  stopExecution(executionId: string, reason: string): void {
    this.stopped.set(executionId, reason);
    for (const abort of this.live.get(executionId) ?? []) abort(new Error(`execution "${executionId}" was stopped (${reason})`));
  }

  /**
   * The role the machine invoked the step in: what `invokeAs` said (agentLoop$ invokes every tool call as
   * "tool"), else, for a step restored from a state journaled before it said so, what the logic declares.
   */
  private declaredRole({ logic, pending }: StepCall): TaskKind | undefined {
    return pending.taskKind ?? declarationOf(logic)?.roleOfUndeclaredStep?.(pending.stepId);
  }

  /**
   * A signal that aborts with the execution's, or when the execution is stopped; tracked while the step runs.
   * The execution's own signal when the call says how to abort it (every journaled step): no second controller per step.
   */
  private stepSignal(call: StepCall): { signal: AbortSignal; done: () => void } {
    const { executionId } = call;
    let { signal, abort } = call;
    if (!abort) {
      const controller = new AbortController();
      const forward = () => controller.abort(call.signal.reason);
      if (call.signal.aborted) forward();
      else call.signal.addEventListener("abort", forward, { once: true });
      signal = controller.signal;
      abort = (reason) => controller.abort(reason);
    }
    let live = this.live.get(executionId);
    if (!live) this.live.set(executionId, (live = new Set()));
    live.add(abort);
    const tracked = live;
    return {
      signal,
      done: () => {
        tracked.delete(abort);
        if (tracked.size === 0 && this.live.get(executionId) === tracked) this.live.delete(executionId);
      },
    };
  }

  /** Runs one journaled step live through the chain; resolves a StepResult, rejects with a StepFailure. */
  async run(call: StepCall): Promise<StepResult> {
    const { executionId, subject, pending } = call;
    const effect = this.config.effects[pending.effectId]!;
    const invokedAs = this.declaredRole(call);
    // Once this signal is aborted the step is abandoned: the execution journals none of its outcome.
    const step = this.stepSignal(call);
    const ctx = this.context(
      {
        executionId,
        stepId: pending.stepId,
        effectId: pending.effectId,
        taskKind: invokedAs ?? effect.kind,
        ...(subject === undefined ? {} : { subject }),
        attempt: 1,
        idempotencyKey: `${executionId}/${pending.stepId}`,
        signal: step.signal,
      },
      invokedAs,
    );
    let usage: Usage | undefined;
    const ring: RingContext = {
      logicId: call.logic.id,
      journaled: true,
      isModel: effect.kind === "llm",
      meter: this.meter,
      onUsage: (u) => (usage = u),
    };
    const trace = new ChainTrace();
    const started = this.clock.now();
    const report = (ok: boolean, { outcome, stoppedAt }: ChainEnd) =>
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
      report(true, trace.finish({ type: "RESOLVE" }));
      return new StepResult(output, usage);
    } catch (error) {
      const end = trace.finish(chainEventFor(error));
      report(false, end);
      throw new StepFailure(error, end.stoppedAt, end.outcome);
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
    const entries: Entry[] = [{ layer: "killSwitch", run: this.killSwitchLayer }];
    if (call.journaled && this.claimCheck) entries.push({ layer: "claimCheck", run: this.claimCheck });
    if (this.redaction) entries.push({ layer: "redaction", run: this.redaction });
    for (const run of capabilityRing(this.config.capabilities, call)) entries.push({ layer: "capabilities", run });
    for (const run of this.config.execution?.effectMiddleware ?? []) entries.push({ layer: "middleware", run });
    return entries;
  }

  /**
   * Composes the layers around the effect: one explicit reduce, Dexie-style. Entering a layer moves the
   * trace inward; every `next` first checks the kill switch, so a stopped step reaches no inner layer.
   */
  private compose(entries: Entry[], effect: Effect, trace: ChainTrace): Run {
    const innermost: Run = (ctx, input) => {
      trace.reach("effect");
      return promiseTry(() => effect.run(input, ctx));
    };
    return entries.reduceRight<Run>(
      (inner, entry) => (ctx, input) => {
        trace.reach(entry.layer);
        const next: Next = (nextInput, nextCtx = ctx) =>
          promiseTry(() => {
            this.assertRunning(nextCtx);
            return inner(nextCtx, nextInput);
          });
        return promiseTry(() => entry.run(ctx, input, next));
      },
      innermost,
    );
  }

  // Beside the clock, the role the machine declared (none for a plain invoke, whose taskKind is only the effect's
  // kind): the claim-check preset offloads only steps declared as tool frames (ADR 0140 D9).
  private context(ctx: EffectContext, invokedAs?: TaskKind): EffectContext {
    // A model step's live deltas go to the bus (app.stream), never to the journal; the effects lookup gives a
    // model step its tools' descriptions and schemas.
    const emitDelta = (delta: ModelDelta) => this.bus.emit("delta", { executionId: ctx.executionId, stepId: ctx.stepId, delta });
    return { ...ctx, ...(invokedAs ? { invokedAs } : {}), clock: this.clock, emitDelta, effectOf: this.effectOf };
  }

  /** The effects lookup every step's context carries (one per runtime: it depends on nothing of the step). */
  private readonly effectOf = (name: string): Effect | undefined => this.config.effects[name];

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
