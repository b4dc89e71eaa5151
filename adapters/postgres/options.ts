// The options of postgresStores and createWorker, checked whole before anything is opened, connected,
// claimed or listened to: a bad one is a ConfigError naming the option and showing the value, at once.
import { constants } from "node:os";
import type { AnyStateMachine } from "xstate";
import { ConfigError } from "../../actors/errors.js";
import type { Effect } from "../../actors/effects/effect.js";
import { isObjectLike, shown } from "../../stores/shapes.js";
import { SCHEMA_NAME } from "./constants.js";
import type { PostgresStores } from "./types.js";

function positiveInteger(path: string, value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0)
    throw new ConfigError(path, `must be a positive integer (${what}); got ${shown(value)}.`);
  return value;
}

// The longest delay Node's timers take (about 24.8 days); a longer one fires after 1 ms instead.
const MAX_TIMER_MS = 2 ** 31 - 1;

function positiveMs(path: string, value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new ConfigError(
      path,
      `must be a positive number of milliseconds up to ${MAX_TIMER_MS} (${what}); got ${shown(value)}.`,
    );
  }
  return value;
}

function nonNegativeMs(path: string, value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_TIMER_MS) {
    throw new ConfigError(
      path,
      `must be a number of milliseconds from 0 up to ${MAX_TIMER_MS} (${what}); got ${shown(value)}.`,
    );
  }
  return value;
}

// A connection string node-postgres reads: a postgres:// or postgresql:// URL, a socket: URL, or a socket directory path.
function connectionString(value: unknown): string {
  const path = "postgresStores.url";
  const fix = 'a connection string such as "postgres://user:password@host:5432/database"';
  if (typeof value !== "string" || value === "") throw new ConfigError(path, `must be ${fix}; got ${shown(value)}.`);
  if (value.startsWith("/")) return value;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(path, `is not a URL; pass ${fix}. Got ${shown(value)}.`);
  }
  if (!["postgres:", "postgresql:", "socket:"].includes(url.protocol))
    throw new ConfigError(
      path,
      `must be a postgres:// (or postgresql://, socket:) URL, ${fix}; got the protocol ${shown(url.protocol)}.`,
    );
  return value;
}

/** The checked options of `postgresStores` (see `PostgresStoresOptions` for each one's meaning). */
export interface CheckedStoresOptions {
  url?: string;
  pool?: unknown;
  schema?: string;
  max?: number;
  pollMs?: number;
  preparedStatements?: boolean;
  streamKeepMs?: number;
}

/** Checks `postgresStores`' options: exactly one of url and pool, and each given option of its type and range. */
export function checkStoresOptions(options: unknown): CheckedStoresOptions {
  if (!isObjectLike(options))
    throw new ConfigError(
      "postgresStores",
      `takes an options object: postgresStores({ url }) or postgresStores({ pool }); got ${shown(options)}.`,
    );
  const { url, pool, schema, max, pollMs, preparedStatements, streamKeepMs } = options;
  if ((url === undefined) === (pool === undefined))
    throw new ConfigError("postgresStores", "pass exactly one of url (a connection string) or pool (a pg.Pool).");
  if (url !== undefined) connectionString(url);
  if (
    pool !== undefined &&
    !(
      isObjectLike(pool) &&
      typeof pool.query === "function" &&
      typeof pool.connect === "function" &&
      typeof pool.on === "function"
    )
  ) {
    throw new ConfigError(
      "postgresStores.pool",
      `must be a node-postgres pg.Pool (new pg.Pool({ ... })); got ${shown(pool)}.`,
    );
  }
  if (schema !== undefined && (typeof schema !== "string" || !SCHEMA_NAME.test(schema))) {
    throw new ConfigError(
      "postgresStores.schema",
      `must match ${SCHEMA_NAME} (a plain lower-case identifier, e.g. "loomwork"); got ${shown(schema)}.`,
    );
  }
  if (max !== undefined) {
    if (pool !== undefined)
      throw new ConfigError("postgresStores.max", "sizes the pool made from url; with your own pool, set max on it.");
    positiveInteger("postgresStores.max", max, "connections in the pool");
  }
  if (pollMs !== undefined)
    positiveMs("postgresStores.pollMs", pollMs, "how often app.result looks again when no notification came");
  if (preparedStatements !== undefined && typeof preparedStatements !== "boolean")
    throw new ConfigError(
      "postgresStores.preparedStatements",
      `must be true or false; got ${shown(preparedStatements)}.`,
    );
  if (streamKeepMs !== undefined)
    nonNegativeMs(
      "postgresStores.streamKeepMs",
      streamKeepMs,
      "how long an ended execution's stream items stay for followers",
    );
  return options as CheckedStoresOptions;
}

// Signals a process cannot handle: a handler for them is refused by Node (and would never run).
const UNHANDLEABLE = new Set(["SIGKILL", "SIGSTOP"]);

/** What `createWorker` runs on, checked. */
export interface CheckedWorkerOptions {
  stores: PostgresStores;
  logics: AnyStateMachine[];
  effects: Record<string, Effect>;
  concurrency: number;
  leaseMs: number;
  pollMs: number;
  drainMs: number;
  sessionCheckMs: number | false;
  id: string | undefined;
  signals: NodeJS.Signals[];
  onLeaseLost: ((executionId: string) => void) | undefined;
}

/**
 * Checks `createWorker`'s options against their types and ranges, defaults filled in. The effects, logics
 * and `app` options are checked further by `defineConfig` when the worker's app is made.
 */
export function checkWorkerOptions(
  options: unknown,
  defaults: { concurrency: number; leaseMs: number; pollMs: number; drainMs: number; sessionCheckMs: number },
): CheckedWorkerOptions {
  if (!isObjectLike(options))
    throw new ConfigError(
      "createWorker",
      `takes an options object: createWorker({ stores, logics, effects }); got ${shown(options)}.`,
    );
  const { stores, logics, effects, id, signals, onLeaseLost } = options;
  if (!(
    isObjectLike(stores) &&
    isObjectLike(stores.events) &&
    typeof stores.events.withHooks === "function" &&
    isObjectLike(stores.db) &&
    isObjectLike(stores.fleet)
  )) {
    throw new ConfigError(
      "createWorker.stores",
      "must be the stores of the fleet's database: await postgresStores({ url }) from loomwork/postgres (workers share executions through it; other stores cannot).",
    );
  }
  if (!Array.isArray(logics) || logics.length === 0)
    throw new ConfigError(
      "createWorker.logics",
      `must list the machines the worker runs (at least one; an execution resumes on its journaled logic id); got ${shown(logics)}.`,
    );
  if (!isObjectLike(effects))
    throw new ConfigError(
      "createWorker.effects",
      `must be an object of named effects (createToolEffect, createLlmEffect, ...); got ${shown(effects)}.`,
    );
  if (id !== undefined && (typeof id !== "string" || id.trim() === ""))
    throw new ConfigError(
      "createWorker.id",
      `must be a non-empty string naming this worker in the lease table; got ${shown(id)}. Omit it for <hostname>:<pid>:<random>.`,
    );
  if (signals !== undefined) {
    if (!Array.isArray(signals))
      throw new ConfigError(
        "createWorker.signals",
        `must be an array of signal names, e.g. ["SIGTERM", "SIGINT"], or [] for none; got ${shown(signals)}.`,
      );
    for (const signal of signals) {
      if (typeof signal !== "string" || !(signal in constants.signals) || UNHANDLEABLE.has(signal)) {
        throw new ConfigError(
          "createWorker.signals",
          `${shown(signal)} is not a signal a process can handle; use names such as "SIGTERM", "SIGINT", "SIGHUP".`,
        );
      }
    }
  }
  if (options.app !== undefined && !isObjectLike(options.app))
    throw new ConfigError(
      "createWorker.app",
      `must be an object of further app options (clock, execution, security, capabilities, observability); got ${shown(options.app)}.`,
    );
  if (onLeaseLost !== undefined && typeof onLeaseLost !== "function")
    throw new ConfigError(
      "createWorker.onLeaseLost",
      `must be a function (executionId) => void; got ${shown(onLeaseLost)}.`,
    );
  return {
    stores: stores as unknown as PostgresStores,
    logics: logics as AnyStateMachine[],
    effects: effects as Record<string, Effect>,
    concurrency: positiveInteger(
      "createWorker.concurrency",
      options.concurrency ?? defaults.concurrency,
      "executions this worker runs at once",
    ),
    leaseMs: positiveMs(
      "createWorker.leaseMs",
      options.leaseMs ?? defaults.leaseMs,
      "how long a lease lasts without a heartbeat",
    ),
    pollMs: positiveMs("createWorker.pollMs", options.pollMs ?? defaults.pollMs, "how often the worker looks for work"),
    drainMs: nonNegativeMs(
      "createWorker.drainMs",
      options.drainMs ?? defaults.drainMs,
      "how long stop() waits for running executions; 0 halts them at once",
    ),
    sessionCheckMs:
      options.sessionCheckMs === false
        ? false
        : positiveMs(
            "createWorker.sessionCheckMs",
            options.sessionCheckMs ?? defaults.sessionCheckMs,
            "how often the worker looks for workers whose session ended; false for lease expiry only",
          ),
    id: id as string | undefined,
    signals: (signals ?? ["SIGTERM"]) as NodeJS.Signals[],
    onLeaseLost: onLeaseLost as ((executionId: string) => void) | undefined,
  };
}
