// The path every live effect step takes, outside in (ADR 0140 D5):
// kill switch -> claim-check slot -> secret redaction -> execution.effectMiddleware... -> the effect.
import type { RuntimeBus } from "./bus.js";
import type { LoomConfig, RedactOption } from "./config.js";
import type { EffectContext, EffectMiddleware } from "./effects.js";
import type { Execution } from "./execution.js";
import type { JournalCodec } from "./journal.js";
import type { PendingStep } from "./plan.js";
import { LoomworkError } from "../stores/errors.js";

/** The step was refused by the kill switch; it reached no inner layer. */
export class EffectStoppedError extends LoomworkError {
  readonly stepId: string;
  constructor(stepId: string, reason: string) {
    super("LOOM_EFFECT_STOPPED", `Step "${stepId}" was stopped before it ran: ${reason}.`);
    this.stepId = stepId;
  }
}

export class EffectRuntime {
  codec: JournalCodec | undefined;
  /** The claim-check layer, when execution.claimCheck is configured (filled by the claim-check module). */
  claimCheck: EffectMiddleware | undefined;
  private killed: string | undefined;
  private readonly stopped = new Map<string, string>();

  constructor(
    private readonly config: LoomConfig,
    private readonly bus: RuntimeBus,
  ) {}

  /** The user middleware list as the chain runs it (empty when none is configured). */
  get middleware(): EffectMiddleware[] {
    return [...(this.config.execution?.effectMiddleware ?? [])];
  }

  engageKillSwitch(reason: string): void {
    this.killed = reason;
  }

  releaseKillSwitch(): void {
    this.killed = undefined;
  }

  get killSwitchEngaged(): boolean {
    return this.killed !== undefined;
  }

  stopExecution(executionId: string, reason: string): void {
    this.stopped.set(executionId, reason);
  }

  async run(execution: Execution, pending: PendingStep, signal: AbortSignal): Promise<unknown> {
    const effect = this.config.effects[pending.effectId]!;
    const ctx: EffectContext = {
      executionId: execution.executionId,
      stepId: pending.stepId,
      effectId: pending.effectId,
      taskKind: effect.kind,
      ...(execution.subject === undefined ? {} : { subject: execution.subject }),
      attempt: 1,
      idempotencyKey: `${execution.executionId}/${pending.stepId}`,
      signal,
    };
    const started = Date.now();
    try {
      const output = await this.invoke(ctx, pending.input);
      this.bus.emit("step", { executionId: ctx.executionId, stepId: ctx.stepId, effectId: ctx.effectId, ok: true, durationMs: Date.now() - started });
      return output;
    } catch (error) {
      this.bus.emit("step", { executionId: ctx.executionId, stepId: ctx.stepId, effectId: ctx.effectId, ok: false, durationMs: Date.now() - started });
      throw error;
    }
  }

  /** Runs the chain for one call. */
  invoke(ctx: EffectContext, input: unknown): Promise<unknown> {
    const effect = this.config.effects[ctx.effectId]!;
    const layers: EffectMiddleware[] = [
      this.killSwitchLayer,
      ...(this.claimCheck ? [this.claimCheck] : []),
      ...(this.config.security?.redact ? [redactionLayer(this.config.security.redact)] : []),
      ...this.middleware,
    ];
    const innermost = (value: unknown) => effect.run(value, ctx);
    const chain = layers.reduceRight<(value: unknown) => Promise<unknown>>((next, layer) => (value) => layer(ctx, value, next), innermost);
    return chain(input);
  }

  private readonly killSwitchLayer: EffectMiddleware = async (ctx, input, next) => {
    const reason = this.killed ?? this.stopped.get(ctx.executionId);
    if (reason !== undefined || ctx.signal.aborted) throw new EffectStoppedError(ctx.stepId, reason ?? "its execution was halted");
    return next(input);
  };
}

/** Scrubs every string in a result (deeply) before anything outside the effect sees it. */
export function redactionLayer(option: RedactOption): EffectMiddleware {
  const scrub = typeof option === "function" ? option : (text: string) => option.reduce<string>((t, p) => t.split(p as never).join("[REDACTED]"), text);
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return scrub(value);
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
    return value;
  };
  return async (_ctx, input, next) => walk(await next(input));
}
