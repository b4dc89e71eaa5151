// Which provider errors a model call retries, and the wait a provider asked for (actors/agents/modelRetry.ts
// asks on each failure it may retry).

const RETRYABLE_STATUS = new Set([408, 409, 429]);
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * A provider error worth another call: the AI SDK's `isRetryable` when it says, else the HTTP status
 * (408, 409, 429, 5xx), else a connection failure (`fetch failed`, ECONNREFUSED, ECONNRESET, ...).
 */
export function shouldRetryModelCall(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  if ("isRetryable" in error && typeof error.isRetryable === "boolean") return error.isRetryable;
  const status = "statusCode" in error ? error.statusCode : "status" in error ? error.status : undefined;
  if (typeof status === "number") return RETRYABLE_STATUS.has(status) || status >= 500;
  const code = "code" in error ? error.code : undefined;
  if (typeof code === "string" && CONNECTION_CODES.has(code)) return true;
  if (error instanceof TypeError && error.message === "fetch failed") return true;
  return "cause" in error && error.cause !== error ? shouldRetryModelCall(error.cause) : false;
}

/** The wait a provider asked for, in ms: `retry-after-ms`, or `retry-after` in seconds or as an HTTP date. */
export function retryAfterMs(error: unknown, now: number): number | undefined {
  const headers =
    typeof error === "object" && error !== null && "responseHeaders" in error ? error.responseHeaders : undefined;
  if (typeof headers !== "object" || headers === null) return undefined;
  const header = (name: string): unknown => Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  const ms = Number(header("retry-after-ms"));
  if (Number.isFinite(ms) && ms >= 0 && header("retry-after-ms") !== undefined) return ms;
  const after = header("retry-after");
  if (typeof after !== "string" || after.trim() === "") return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(after);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}
