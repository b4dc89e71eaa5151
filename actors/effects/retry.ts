// Retries with backoff and the effect timeout: middleware on the app's clock, so a simulated clock
// drives them in tests exactly as the real one does in production. The capability ring
// (./capabilities.ts) installs them when `capabilities.retry` or `capabilities.timeoutMs` is set.
import { LoomworkError } from "../../stores/errors.js";
import type { EffectContext, EffectMiddleware } from "./effect.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";
import { clockOf, sleep, validateRetryOptions, type RetryOptions } from "./retryOptions.js";

export type { Next } from "./effect.js";
// The clock helpers and the options live in ./retryOptions.ts (the start path needs them, not this module).
export { clockOf, sleep, validateRetryOptions, type RetryOptions } from "./retryOptions.js";

/** The effect did not settle within its timeout; its `ctx.signal` was aborted with this error. */
export class EffectTimeoutError extends LoomworkError {
  static override readonly name: string = "EffectTimeoutError";
  readonly stepId: string;
  readonly effectId: string;
  readonly timeoutMs: number;
  constructor(stepId: string, effectId: string, timeoutMs: number) {
    super(
      RUNTIME_ERROR_CODES.effectTimeout,
      `Step "${stepId}" (effect "${effectId}") did not settle within ${timeoutMs} ms; its signal was aborted. ` +
        `Raise capabilities.timeoutMs (or its "${effectId}" entry) if the effect needs longer.`,
    );
    this.stepId = stepId;
    this.effectId = effectId;
    this.timeoutMs = timeoutMs;
  }
}

/** Error codes a retry never retries: refusals, which the same call would meet again. */
const { effectStopped, grantDenied, quotaExceeded, guardRefused, nonJsonOutput, toolInput } = RUNTIME_ERROR_CODES;
const NEVER_RETRIED = new Set<string>([
  effectStopped,
  grantDenied,
  quotaExceeded,
  guardRefused,
  nonJsonOutput,
  toolInput,
]);

/**
 * Retries a failed call with backoff on the app's clock. The inner layers and the effect see
 * `ctx.attempt` 1, 2, ...; the idempotency key stays the step's. Opt-in: list it in
 * `execution.effectMiddleware`, or set `capabilities.retry` to install it in the capability ring.
 *
 * @example
 * execution: { effectMiddleware: [retryMiddleware({ attempts: 3, backoffMs: 200, retryOn: (e) => isTransient(e) })] }
 */
export function retryMiddleware(options: RetryOptions): EffectMiddleware {
  validateRetryOptions(options, "retryMiddleware");
  const { attempts, backoffMs = 0, maxBackoffMs = Number.POSITIVE_INFINITY, retryOn } = options;
  const delayBefore = (attempt: number) => {
    const ms = typeof backoffMs === "function" ? backoffMs(attempt) : backoffMs * 2 ** (attempt - 2);
    return Math.min(Math.max(0, ms), maxBackoffMs);
  };
  return async (ctx, input, next) => {
    const first = ctx.attempt;
    for (let attempt = first; ; attempt++) {
      const attemptCtx: EffectContext = { ...ctx, attempt };
      try {
        return await next(input, attemptCtx);
      } catch (error) {
        const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
        const retryable =
          !ctx.signal.aborted &&
          !(typeof code === "string" && NEVER_RETRIED.has(code)) &&
          (retryOn?.(error, attemptCtx) ?? true);
        if (!retryable || attempt - first + 1 >= attempts) throw error;
        await sleep(ctx, delayBefore(attempt + 1));
      }
    }
  };
}

/**
 * Fails a call that has not settled within its timeout with `EffectTimeoutError`, aborting the
 * `ctx.signal` the inner layers and the effect received. The app installs it from
 * `capabilities.timeoutMs`; `timeoutMs` may also pick a timeout per call (undefined: none).
 *
 * @example
 * execution: { effectMiddleware: [timeoutMiddleware((ctx) => (ctx.effectId === "crawl" ? 60_000 : undefined))] }
 */
export function timeoutMiddleware(timeoutMs: number | ((ctx: EffectContext) => number | undefined)): EffectMiddleware {
  return (ctx, input, next) => {
    const ms = typeof timeoutMs === "function" ? timeoutMs(ctx) : timeoutMs;
    if (ms === undefined) return next(input);
    const controller = new AbortController();
    const forward = () => controller.abort(ctx.signal.reason);
    if (ctx.signal.aborted) forward();
    else ctx.signal.addEventListener("abort", forward, { once: true });
    return new Promise<unknown>((resolve, reject) => {
      const cancel = clockOf(ctx).setTimer(() => {
        const error = new EffectTimeoutError(ctx.stepId, ctx.effectId, ms);
        controller.abort(error);
        reject(error);
      }, ms);
      next(input, { ...ctx, signal: controller.signal })
        .then(resolve, reject)
        .finally(() => {
          cancel();
          ctx.signal.removeEventListener("abort", forward);
        });
    });
  };
}
