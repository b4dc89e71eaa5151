// The PostgreSQL adapter's own ids and codes, defined once: error codes, the default schema, the
// notification channel prefix and the fleet's defaults.

/** The stable `code` of the PostgreSQL adapter's errors. */
export const POSTGRES_ERROR_CODES = {
  /** `LeaseLostError`: an append by a worker whose lease on the execution expired or was taken over. */
  leaseLost: "LOOM_PG_LEASE_LOST",
  /** `SchemaVersionError`: the database's schema is newer than this loomwork knows. */
  schemaVersion: "LOOM_PG_SCHEMA_VERSION",
  /** `PostgresStoresClosedError`: the stores were closed and are used again. */
  closed: "LOOM_PG_CLOSED",
} as const;

/** The schema `postgresStores` creates its tables in when none is given. */
export const DEFAULT_SCHEMA = "loomwork";

/** Prefix of the LISTEN/NOTIFY channel of one schema (`<prefix>_<schema>`). */
export const CHANNEL_PREFIX = "loomwork";

/**
 * Notification kinds on the channel (the payload is `<kind>:<executionId>`): `runnable`, an execution was
 * submitted or its lease released (a worker may claim it); `inbox`, an event was put in its inbox;
 * `ended`, an EXECUTION_ENDED record was appended.
 */
/** The inbox row of a tree's message (FleetPort.message): an event of this reserved type carrying the message under the same key. */
export const FLEET_MESSAGE_KEY = "loom.fleet.message";

export const NOTIFY = { runnable: "runnable", inbox: "inbox", ended: "ended" } as const;

/** The unique-violation SQLSTATE: a second writer's records collided on `(execution_id, seq)`. */
export const UNIQUE_VIOLATION = "23505";

/** The fleet's defaults (createWorker). */
export const WORKER_DEFAULTS = {
  concurrency: 8,
  leaseMs: 15_000,
  pollMs: 1_000,
  drainMs: 30_000,
  sessionCheckMs: 500,
} as const;

/** The advisory-lock namespace of the workers' sessions (its first key: `hashtext(<prefix>.<schema>) & 2147483647`). */
export const WORKER_LOCK_PREFIX = "loomwork.workers";

/** The schema names `postgresStores` accepts: a plain lower-case identifier (its channel name must fit 63 bytes). */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,47}$/;
