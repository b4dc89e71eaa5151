// What the retry and timeout layers share with the start path: the app's clock on the EffectContext,
// sleeping on it, and the retry options with their check at boot, apart from the layers themselves
// (./retry.ts): a module that checks or sleeps does not import the retry and timeout middleware.
import { realClock, type Clock } from "../clock.js";
import type { EffectContext } from "./effect.js";
import { ConfigError } from "../errors.js";

/** The app clock the runtime gave `ctx` (`ctx.clock`), or the real clock outside a runtime. */
export function clockOf(ctx: EffectContext): Clock {
  return ctx.clock ?? realClock;
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
  if (typeof options !== "object" || options === null)
    throw new ConfigError(path, "an object { attempts, backoffMs?, maxBackoffMs?, retryOn? }.");
  const option = (key: string): unknown => Reflect.get(options, key);
  for (const key of Object.keys(options)) {
    if (!["attempts", "backoffMs", "maxBackoffMs", "retryOn"].includes(key)) {
      throw new ConfigError(
        `${path}.${key}`,
        "unknown option. Known retry options: attempts, backoffMs, maxBackoffMs, retryOn.",
      );
    }
  }
  const attempts = option("attempts");
  if (typeof attempts !== "number" || !Number.isInteger(attempts) || attempts < 1)
    throw new ConfigError(`${path}.attempts`, "a positive integer (the first attempt included).");
  const backoff = option("backoffMs");
  if (
    backoff !== undefined &&
    typeof backoff !== "function" &&
    !(typeof backoff === "number" && Number.isFinite(backoff) && backoff >= 0)
  ) {
    throw new ConfigError(`${path}.backoffMs`, "a non-negative number of milliseconds, or a function (attempt) => ms.");
  }
  const max = option("maxBackoffMs");
  if (max !== undefined && !(typeof max === "number" && Number.isFinite(max) && max >= 0))
    throw new ConfigError(`${path}.maxBackoffMs`, "a non-negative number of milliseconds.");
  const retryOn = option("retryOn");
  if (retryOn !== undefined && typeof retryOn !== "function")
    throw new ConfigError(`${path}.retryOn`, "a function (error, ctx) => boolean.");
}
