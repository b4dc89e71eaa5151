// The capability ring's configured layers (grants, quotas, guardRequest) and their errors, installed by
// actors/effects/capabilities.ts when `capabilities` configures them.
import type { ModelRequest } from "../../machines/helpers/messages.js";
import { LoomworkError } from "../../stores/errors.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";
import type { EffectContext, EffectMiddleware } from "./effect.js";
import type { StepLayer } from "./layers.js";
import type { Meter, QuotaOptions } from "./meter.js";

/** What `capabilities.guardRequest` returns: nothing (send as is), a rewritten request, or a veto. */
export type GuardVerdict = ModelRequest | { veto: string } | undefined | void;

/** A logic called an effect its grant does not list. */
export class GrantDeniedError extends LoomworkError {
  static override readonly name: string = "GrantDeniedError";
  readonly logicId: string;
  readonly effectId: string;
  constructor(logicId: string, effectId: string, granted: readonly string[], grantKey: string) {
    super(
      RUNTIME_ERROR_CODES.grantDenied,
      `Logic "${logicId}" may not call effect "${effectId}": capabilities.grants["${grantKey}"] grants ` +
        `${granted.length ? granted.join(", ") : "no effect"}. Add "${effectId}" to it if the call is intended.`,
    );
    this.logicId = logicId;
    this.effectId = effectId;
  }
}

/** `capabilities.guardRequest` vetoed a model request (or threw); the model was not called. */
export class GuardRefusedError extends LoomworkError {
  static override readonly name: string = "GuardRefusedError";
  readonly stepId: string;
  readonly reason: string;
  constructor(stepId: string, reason: string) {
    super(
      RUNTIME_ERROR_CODES.guardRefused,
      `capabilities.guardRequest refused the model request of step "${stepId}": ${reason}.`,
    );
    this.stepId = stepId;
    this.reason = reason;
  }
}

/**
 * `capabilities.grants`: a logic listed (else `"*"`) may call only the effects its entry grants; a call
 * outside them fails with GrantDeniedError. A logic with no entry, and a transient call, are not restricted.
 */
export function grantsLayer(grants: Record<string, string[]>): StepLayer {
  const keyOf = (logicId: string) =>
    grants[logicId] !== undefined ? logicId : grants["*"] !== undefined ? "*" : undefined;
  return {
    appliesTo: (step) => step.journaled && keyOf(step.logicId) !== undefined,
    run: (ctx, input, next, step) => {
      const key = keyOf(step.logicId);
      const granted = key === undefined ? undefined : grants[key];
      if (key === undefined || granted === undefined) return next(input);
      if (!granted.includes(ctx.effectId)) throw new GrantDeniedError(step.logicId, ctx.effectId, granted, key);
      return next(input);
    },
  };
}

/** `capabilities.quotas`: a model call is admitted against the execution's journaled usage, its reservation released if aborted. */
export function quotaLayer(meter: Meter, quotas: QuotaOptions): EffectMiddleware {
  return async (ctx, input, next) => {
    await meter.admit(ctx.executionId, ctx.stepId, quotas);
    try {
      return await next(input);
    } finally {
      // An aborted step journals no outcome, so nothing would release its reservation.
      if (ctx.signal.aborted) meter.release(ctx.executionId, ctx.stepId);
    }
  };
}

/** `capabilities.guardRequest`: sees each model request first; a veto (or a throw) fails it with GuardRefusedError. */
export function guardLayer(
  guardRequest: (request: ModelRequest, ctx: EffectContext) => GuardVerdict | Promise<GuardVerdict>,
): EffectMiddleware {
  return async (ctx, input, next) => {
    let verdict: GuardVerdict;
    try {
      verdict = await guardRequest(input as ModelRequest, ctx);
    } catch (error) {
      if (error instanceof GuardRefusedError) throw error;
      throw new GuardRefusedError(ctx.stepId, error instanceof Error ? error.message : String(error));
    }
    if (verdict === undefined) return next(input);
    if (typeof verdict === "object" && verdict !== null && "veto" in verdict && typeof verdict.veto === "string") {
      throw new GuardRefusedError(ctx.stepId, verdict.veto);
    }
    if (typeof verdict === "object" && verdict !== null && "messages" in verdict && Array.isArray(verdict.messages))
      return next(verdict);
    throw new TypeError(
      `capabilities.guardRequest returned ${JSON.stringify(verdict)} for step "${ctx.stepId}": return nothing, a ModelRequest, or { veto: reason }.`,
    );
  };
}
