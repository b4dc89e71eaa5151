// Retries with backoff and the effect timeout: middleware on the app's clock, so a simulated clock
// drives them in tests exactly as the real one does in production.
import { LoomworkError } from "../../stores/errors.js";
import { realClock, type Clock } from "../clock.js";
import type { EffectContext, EffectMiddleware } from "./effect.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";
import { ConfigError } from "../errors.js";

export type { Next } from "./effect.js";

/** Where the runtime puts the app's clock on every EffectContext it builds (a symbol: never JSON, never journaled). */
export const LOOM_CLOCK: unique symbol = Symbol.for("loomwork.clock");

/** The app clock the runtime attached to `ctx`, or the real clock outside a runtime. */
export function clockOf(ctx: EffectContext): Clock {
  const clock: Clock | undefined = Reflect.get(ctx, LOOM_CLOCK);
  return clock ?? realClock;
}

/** Waits `ms` on the context's clock; rejects with the signal's reason if `ctx.signal` aborts first. */
export function sleep(ctx: EffectContext, ms: number): Promise<void> {
  if (ctx.signal.aborted) return Promise.reject(ctx.signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      cancel();
      reject(ctx.signal.reason);
    };
    const cancel = clockOf(ctx).setTimer(() => {
      ctx.signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    ctx.signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The effect did not settle within its timeout; its `ctx.signal` was aborted with this error. */
export class EffectTimeoutError extends LoomworkError {
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
const NEVER_RETRIED = new Set<string>([effectStopped, grantDenied, quotaExceeded, guardRefused, nonJsonOutput, toolInput]);

/** Options of `retryMiddleware`: attempts, backoff and which errors to retry. */
export interface RetryOptions {
  /** Attempts in all, the first included: `attempts: 3` runs the effect at most three times. */
  attempts: number;
  /**
   * The wait before each retry, on the app's clock: a number is the first wait, doubled at each
   * further retry (capped by `maxBackoffMs`); a function receives the attempt about to run (2, 3, ...).
   * @defaultValue 0
   */
  backoffMs?: number | ((attempt: number) => number);
  /** Caps a doubling backoff. */
  maxBackoffMs?: number;
  /**
   * Whether to retry after `error`. Refusals (kill switch, grant, quota, guard) and non-JSON outputs are
   * never retried, nor is a call whose signal was aborted. @defaultValue every other error
   */
  retryOn?: (error: unknown, ctx: EffectContext) => boolean;
}

/** Refuses bad retry options at boot, naming `path`. */
export function validateRetryOptions(options: unknown, path: string): asserts options is RetryOptions {
  if (typeof options !== "object" || options === null) throw new ConfigError(path, "an object { attempts, backoffMs?, maxBackoffMs?, retryOn? }.");
  const option = (key: string): unknown => Reflect.get(options, key);
  for (const key of Object.keys(options)) {
    if (!["attempts", "backoffMs", "maxBackoffMs", "retryOn"].includes(key)) {
      throw new ConfigError(`${path}.${key}`, "unknown option. Known retry options: attempts, backoffMs, maxBackoffMs, retryOn.");
    }
  }
  const attempts = option("attempts");
  if (typeof attempts !== "number" || !Number.isInteger(attempts) || attempts < 1) throw new ConfigError(`${path}.attempts`, "a positive integer (the first attempt included).");
  const backoff = option("backoffMs");
  if (backoff !== undefined && typeof backoff !== "function" && !(typeof backoff === "number" && Number.isFinite(backoff) && backoff >= 0)) {
    throw new ConfigError(`${path}.backoffMs`, "a non-negative number of milliseconds, or a function (attempt) => ms.");
  }
  const max = option("maxBackoffMs");
  if (max !== undefined && !(typeof max === "number" && Number.isFinite(max) && max >= 0)) throw new ConfigError(`${path}.maxBackoffMs`, "a non-negative number of milliseconds.");
  const retryOn = option("retryOn");
  if (retryOn !== undefined && typeof retryOn !== "function") throw new ConfigError(`${path}.retryOn`, "a function (error, ctx) => boolean.");
}

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
        const retryable = !ctx.signal.aborted && !(typeof code === "string" && NEVER_RETRIED.has(code)) && (retryOn?.(error, attemptCtx) ?? true);
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
