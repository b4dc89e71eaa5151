// Retries of a model call that failed with a retryable provider error (connection refused, 408, 409,
// 429, 5xx, an AI SDK error with isRetryable): backoff on the app's clock, Retry-After honoured. Only the
// final outcome is journaled; the attempts are counted in the reply's usage.
import { clockOf, sleep } from "../effects/retryOptions.js";
import { retryAfterMs, shouldRetryModelCall } from "./retryableErrors.js";
import type { EffectContext } from "../effects/effect.js";
import { ConfigError } from "../errors.js";

/** Options of a model effect's retries (`createLlmEffect(model, { retry })`). */
export interface ModelRetryOptions {
  /** Calls in all, the first included. @defaultValue 5 */
  attempts?: number;
  /** The wait before the first retry, doubled at each further one. @defaultValue 500 */
  backoffMs?: number;
  /** Caps the doubling backoff. @defaultValue 30_000 */
  maxBackoffMs?: number;
  /** Caps a provider's `Retry-After` (a longer one fails the step at once). @defaultValue 60_000 */
  maxRetryAfterMs?: number;
  /** Whether `error` is retryable. @defaultValue shouldRetryModelCall */
  retryOn?: (error: unknown) => boolean;
}

/** The defaults of a model effect's retries. */
export const DEFAULT_MODEL_RETRY = {
  attempts: 5,
  backoffMs: 500,
  maxBackoffMs: 30_000,
  maxRetryAfterMs: 60_000,
} as const;

/** Refuses bad retry options at construction, naming `path`. */
export function checkModelRetry(options: ModelRetryOptions, path: string): void {
  const count = (key: "attempts" | "backoffMs" | "maxBackoffMs" | "maxRetryAfterMs", min: number) => {
    const value = options[key];
    if (
      value !== undefined &&
      !(
        typeof value === "number" &&
        Number.isFinite(value) &&
        value >= min &&
        (key !== "attempts" || Number.isInteger(value))
      )
    ) {
      throw new ConfigError(
        `${path}.${key}`,
        key === "attempts" ? "a positive integer (the first call included)." : "a non-negative number of milliseconds.",
      );
    }
  };
  count("attempts", 1);
  count("backoffMs", 0);
  count("maxBackoffMs", 0);
  count("maxRetryAfterMs", 0);
  if (options.retryOn !== undefined && typeof options.retryOn !== "function")
    throw new ConfigError(`${path}.retryOn`, "a function (error) => boolean.");
}

/** Runs `call` until it succeeds, fails with an error not retryable, or spends its attempts; resolves its value and the attempts made. */
export async function withModelRetry<T>(
  options: ModelRetryOptions | false,
  ctx: EffectContext,
  call: (attempt: number) => Promise<T>,
): Promise<{ value: T; attempts: number }> {
  const o = options === false ? { attempts: 1 } : options;
  const attempts = o.attempts ?? DEFAULT_MODEL_RETRY.attempts;
  const backoff = o.backoffMs ?? DEFAULT_MODEL_RETRY.backoffMs;
  const maxBackoff = o.maxBackoffMs ?? DEFAULT_MODEL_RETRY.maxBackoffMs;
  const maxRetryAfter = o.maxRetryAfterMs ?? DEFAULT_MODEL_RETRY.maxRetryAfterMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return { value: await call(attempt), attempts: attempt };
    } catch (error) {
      if (ctx.signal.aborted || attempt >= attempts) throw error;
      if (!(o.retryOn ?? shouldRetryModelCall)(error)) throw error;
      const asked = retryAfterMs(error, clockOf(ctx).now());
      if (asked !== undefined && asked > maxRetryAfter) throw error;
      await sleep(ctx, asked ?? Math.min(backoff * 2 ** (attempt - 1), maxBackoff));
    }
  }
}
