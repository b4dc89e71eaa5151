// Queues of the fleet (flow control): what `defineConfig({ queues })` declares and what `app.submit` names, checked
// whole before anything is stored. The limits are enforced by the fleet's claim (loomwork/postgres); here they are only
// checked and turned into the placement the fleet's queue stores with the submitted execution.
import type { FleetPlacement } from "../../stores/types.js";
import { ConfigError } from "../errors.js";

/** One queue's limits; each is optional (no limit). Counted across the fleet, in executions (not steps). */
export interface QueueOptions {
  /** Executions of the queue that hold a slot at once, over every key. */
  concurrency?: number;
  /** Executions of one key (`app.submit`'s `key`) that hold a slot at once. */
  perKey?: number;
  /** Starts per key in any window of `periodMs` milliseconds (an execution's first claim is its start). */
  rate?: {
    /** Starts allowed per key in any window of `periodMs`. */
    limit: number;
    /** The window's length in milliseconds. */
    periodMs: number;
  };
}

/** Where `app.submit` puts an execution to wait for a slot (part of SubmitOptions). */
export interface QueuePlacementOptions {
  /** The queue (a name declared in `defineConfig({ queues })`) whose limits the execution waits for. */
  queue?: string;
  /** The key its per-key limits count it under (a user, a conversation); needs `queue`. @defaultValue "" (one key) */
  key?: string;
  /**
   * Its order in the queue: lower starts first (as in DBOS), an integer from 0 to 2147483647; equal priorities start
   * in turn over keys, then in submit order. Needs `queue`.
   * @defaultValue 0
   */
  priority?: number;
}

/** The range of `app.submit`'s `priority` (PostgreSQL's integer): lower starts first. */
export const QUEUE_PRIORITY = { min: 0, max: 2_147_483_647, default: 0 } as const;

const QUEUE_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
const KEY_MAX = 512;

const shown = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === undefined || value === null)
    return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
};

function positiveInteger(path: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0 || value > QUEUE_PRIORITY.max)
    throw new ConfigError(path, `must be a positive integer up to ${QUEUE_PRIORITY.max}; got ${shown(value)}.`);
  return value;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Checks `defineConfig({ queues })`: names, known keys, limits positive integers. */
export function checkQueues(queues: unknown): void {
  if (queues === undefined) return;
  if (!isRecord(queues))
    throw new ConfigError(
      "queues",
      `must be an object of queues by name, e.g. { perUser: { perKey: 1 } }; got ${shown(queues)}.`,
    );
  for (const [name, queue] of Object.entries(queues)) {
    if (!QUEUE_NAME.test(name))
      throw new ConfigError(
        "queues",
        `queue name ${shown(name)} must be 1 to 128 letters, digits, "_", ".", ":" or "-".`,
      );
    const at = `queues.${name}`;
    if (!isRecord(queue))
      throw new ConfigError(at, `must be an object of limits ({ concurrency?, perKey?, rate? }); got ${shown(queue)}.`);
    for (const key of Object.keys(queue))
      if (!["concurrency", "perKey", "rate"].includes(key))
        throw new ConfigError(
          `${at}.${key}`,
          `unknown queue option ${shown(key)}; a queue takes concurrency, perKey and rate.`,
        );
    if (queue.concurrency !== undefined) positiveInteger(`${at}.concurrency`, queue.concurrency);
    if (queue.perKey !== undefined) positiveInteger(`${at}.perKey`, queue.perKey);
    if (queue.rate !== undefined) {
      const rate = queue.rate;
      if (!isRecord(rate))
        throw new ConfigError(
          `${at}.rate`,
          `must be { limit, periodMs } (starts per period, per key); got ${shown(rate)}.`,
        );
      for (const key of Object.keys(rate))
        if (key !== "limit" && key !== "periodMs")
          throw new ConfigError(
            `${at}.rate.${key}`,
            `unknown rate option ${shown(key)}; a rate takes limit and periodMs.`,
          );
      positiveInteger(`${at}.rate.limit`, rate.limit);
      positiveInteger(`${at}.rate.periodMs`, rate.periodMs);
    }
  }
}

/**
 * Checks a submit's `queue`, `key` and `priority` against the app's queues; the placement the fleet stores, or
 * undefined when the submit names no queue. Refused with a ConfigError naming the value, before anything is stored.
 */
export function placementOf(
  queues: Record<string, QueueOptions> | undefined,
  options: QueuePlacementOptions,
): FleetPlacement | undefined {
  const { queue, key, priority } = options;
  if (queue === undefined) {
    if (key !== undefined)
      throw new ConfigError("submit.key", `key ${shown(key)} counts under a queue's limits: name the queue too.`);
    if (priority !== undefined)
      throw new ConfigError("submit.priority", `priority ${shown(priority)} orders a queue: name the queue too.`);
    return undefined;
  }
  if (typeof queue !== "string" || !queues || !Object.hasOwn(queues, queue))
    throw new ConfigError(
      "submit.queue",
      `unknown queue ${shown(queue)}; declare it in defineConfig({ queues: { ${typeof queue === "string" ? queue : "name"}: { ... } } })${
        queues
          ? ` (declared: ${
              Object.keys(queues)
                .map((q) => JSON.stringify(q))
                .join(", ") || "none"
            })`
          : ""
      }.`,
    );
  if (key !== undefined && (typeof key !== "string" || key.length > KEY_MAX))
    throw new ConfigError("submit.key", `must be a string of up to ${KEY_MAX} characters; got ${shown(key)}.`);
  if (
    priority !== undefined &&
    (typeof priority !== "number" ||
      !Number.isInteger(priority) ||
      priority < QUEUE_PRIORITY.min ||
      priority > QUEUE_PRIORITY.max)
  )
    throw new ConfigError(
      "submit.priority",
      `must be an integer from ${QUEUE_PRIORITY.min} to ${QUEUE_PRIORITY.max} (lower starts first); got ${shown(priority)}.`,
    );
  const limits = queues[queue]!;
  return {
    queue,
    key: key ?? "",
    priority: priority ?? QUEUE_PRIORITY.default,
    limits: {
      ...(limits.concurrency === undefined ? {} : { concurrency: limits.concurrency }),
      ...(limits.perKey === undefined ? {} : { perKey: limits.perKey }),
      ...(limits.rate === undefined ? {} : { rate: { limit: limits.rate.limit, periodMs: limits.rate.periodMs } }),
    },
  };
}
