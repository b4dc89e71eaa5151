// The app's effect runtime, as named parts: the kill switch and the stops (`app.killSwitch`, `app.stop`
// aborting running steps), the meter (`app.usage`, quotas), the chain built once for the configuration
// (./chain.ts), and transient calls (./transient.ts). `run` takes one journaled step through the chain
// with its context, and reports it on the bus's `step` event.
import type { Usage } from "../../machines/helpers/messages.js";
import type { TaskKind } from "../../machines/helpers/invokeAs.js";
import type { JournalRecord } from "../../stores/types.js";
import type { RuntimeBus, Warning } from "../bus.js";
import { realClock, type Clock } from "../clock.js";
import type { LoomConfig } from "../config.js";
import { declarationOf } from "../logicDeclaration.js";
import type { StepCall } from "../journal/host.js";
import { EffectChain } from "./chain.js";
import type { Effect, EffectContext, EffectMiddleware, ModelDelta } from "./effect.js";
import { KillSwitch, type ChainStep } from "./layers.js";
import { Meter, type TreeMembers } from "./meter.js";
import { StepStops } from "./stops.js";
import { ChainTrace, chainEventFor, StepFailure, StepResult, type ChainEnd } from "./trace.js";
import { TransientCalls } from "./transient.js";

export interface EffectRuntimeOptions {
  /** The app clock: stamps durations, and drives retry backoff and timeouts. */
  clock?: Clock;
  /** Reads an execution's journal (quotas and `usage` count from it). */
  readLog?: (executionId: string) => Promise<JournalRecord[]>;
  /** The catalogue's listing of a tree: quotas count a tree of executions. */
  treeMembers?: TreeMembers;
  /** The app's warning sink (a reply without usage under a token quota). */
  warn?: (warning: Warning) => void;
  /** The claim-check layer, when execution.claimCheck is configured (./claimCheckPreset.ts). */
  claimCheck?: EffectMiddleware;
}

export class EffectRuntime {
  readonly killSwitch = new KillSwitch();
  /** What stops a step between layers: the kill switch, `app.stop`, its aborted signal. */
  readonly stops: StepStops;
  /** Per-execution model usage, derived from the journal. */
  readonly meter: Meter;
  readonly transient: TransientCalls;
  /** The chain every step runs through, composed once for the configuration. */
  private current: EffectChain;
  private readonly clock: Clock;

  constructor(
    private readonly config: LoomConfig,
    private readonly bus: RuntimeBus,
    options: EffectRuntimeOptions = {},
  ) {
    this.clock = options.clock ?? config.clock ?? realClock;
    const readLog = options.readLog ?? (() => Promise.resolve([]));
    this.meter = new Meter(
      bus,
      readLog,
      (effectId) => config.effects[effectId]?.kind === "llm",
      options.warn,
      options.treeMembers,
    );
    this.stops = new StepStops(this.killSwitch, bus);
    this.current = new EffectChain({ config, stops: this.stops, meter: this.meter, claimCheck: options.claimCheck });
    this.transient = new TransientCalls(
      config.effects,
      () => this.current,
      (ctx) => this.context(ctx),
    );
  }

  get chain(): EffectChain {
    return this.current;
  }

  /** The claim-check layer of the chain, when one is installed. */
  get claimCheck(): EffectMiddleware | undefined {
    return this.current.parts.claimCheck;
  }

  /** Rebuilds the chain with another claim-check layer (the runtime's own tests swap it in). */
  set claimCheck(layer: EffectMiddleware | undefined) {
    this.current = this.current.withClaimCheck(layer);
  }

  /** `app.stop`: no step of the execution enters another layer, and its running steps' signals are aborted. */
  stopExecution(executionId: string, reason: string): void {
    this.stops.stop(executionId, reason);
  }

  /** `app.invokeTransient` (./transient.ts). */
  invokeTransient(
    effectId: string,
    input: unknown,
    options: { signal?: AbortSignal; subject?: string } = {},
  ): Promise<unknown> {
    return this.transient.invoke(effectId, input, options);
  }

  /** Runs one journaled step live through the chain; resolves a StepResult, rejects with a StepFailure. */
  async run(call: StepCall): Promise<StepResult> {
    const { executionId, subject, pending } = call;
    const effect = this.config.effects[pending.effectId]!;
    const invokedAs = declaredRole(call);
    // Once this signal is aborted the step is abandoned: the execution journals none of its outcome.
    const tracked = this.stops.track(call);
    const ctx = this.context(
      {
        executionId,
        stepId: pending.stepId,
        effectId: pending.effectId,
        taskKind: invokedAs ?? effect.kind,
        ...(subject === undefined ? {} : { subject }),
        attempt: 1,
        idempotencyKey: `${executionId}/${pending.stepId}`,
        signal: tracked.signal,
      },
      invokedAs,
    );
    let usage: Usage | undefined;
    const trace = new ChainTrace();
    const step: ChainStep = {
      effect,
      logicId: call.logic.id,
      journaled: true,
      isModel: effect.kind === "llm",
      trace,
      onUsage: (u) => (usage = u),
    };
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
      const output = await this.current.run(step, ctx, pending.input);
      report(true, trace.finish({ type: "RESOLVE" }));
      return new StepResult(output, usage);
    } catch (error) {
      const end = trace.finish(chainEventFor(error));
      report(false, end);
      throw new StepFailure(error, end.stoppedAt, end.outcome);
    } finally {
      tracked.done();
    }
  }

  // Beside the clock, the role the machine declared (none for a plain invoke, whose taskKind is only the effect's
  // kind): the claim-check preset offloads only steps declared as tool frames (ADR 0140 D9).
  private context(ctx: EffectContext, invokedAs?: TaskKind): EffectContext {
    // A model step's live deltas go to the bus (app.stream), never to the journal; the effects lookup gives a
    // model step its tools' descriptions and schemas.
    const emitDelta = (delta: ModelDelta) =>
      this.bus.emit("delta", { executionId: ctx.executionId, stepId: ctx.stepId, delta });
    return { ...ctx, ...(invokedAs ? { invokedAs } : {}), clock: this.clock, emitDelta, effectOf: this.effectOf };
  }

  /** The effects lookup every step's context carries (one per runtime: it depends on nothing of the step). */
  private readonly effectOf = (name: string): Effect | undefined => this.config.effects[name];
}

/**
 * The role the machine invoked the step in: what `invokeAs` said (agentLoop$ invokes every tool call as
 * "tool"), else, for a step restored from a state journaled before it said so, what the logic declares.
 */
function declaredRole({ logic, pending }: StepCall): TaskKind | undefined {
  return pending.taskKind ?? declarationOf(logic)?.roleOfUndeclaredStep?.(pending.stepId);
}
