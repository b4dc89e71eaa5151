// loomwork/postgres: the storage SPIs on PostgreSQL, and the worker fleet that shares them. Node only.
import pg from "pg";
import { DEFAULT_SCHEMA, WORKER_DEFAULTS } from "./constants.js";
import { PostgresContentStore } from "./contentStore.js";
import { PgDatabase } from "./database.js";
import { PostgresEventStore } from "./eventStore.js";
import { PostgresFleet } from "./fleetPort.js";
import { PostgresKeyStore } from "./keyStore.js";
import { PostgresScheduleStore } from "./schedules.js";
import { PostgresStreamFeed } from "./streamFeed.js";
import { checkStoresOptions } from "./options.js";
import type { PostgresStores } from "./types.js";

export type { PostgresStores } from "./types.js";

/** Options of `postgresStores`: where the database is (`url` or `pool`), and the schema to use. */
export interface PostgresStoresOptions {
  /** A connection string (`postgres://user:pass@host:5432/db`); the stores own the pool they make from it. */
  url?: string;
  /** A pool of yours (node-postgres `pg.Pool`); `close()` leaves it open. */
  pool?: pg.Pool;
  /**
   * The schema the tables live in, created when missing; one schema is one journal (separate apps or
   * tests on one database use separate schemas). A plain lower-case identifier.
   * @defaultValue "loomwork"
   */
  schema?: string;
  /**
   * Connections of the pool made from `url`.
   * @defaultValue 10
   */
  max?: number;
  /**
   * How long `app.result` of a submitted execution waits for a notification before it looks at the table again.
   * @defaultValue 1000
   */
  pollMs?: number;
  /**
   * Send the append and the hot reads as named prepared statements: parsed and planned once per
   * connection, then only their parameters go over the wire. Turn off behind a pooler in transaction mode
   * that does not track prepared statements (PgBouncer before 1.21, or without `max_prepared_statements`).
   * @defaultValue true
   */
  preparedStatements?: boolean;
  /**
   * How long what a worker streamed of an execution (`app.stream` in another process reads it) stays in the
   * database once the turn is over (the execution ended, parked, or runs a long tool; never while a step
   * streams), so a follower that is behind or reconnects still reads it (ADR 0019). Items are removed after an
   * hour in any case.
   * @defaultValue 30000
   */
  streamKeepMs?: number;
}

/**
 * Opens the stores on PostgreSQL: applies the schema's missing migrations (under an advisory lock, so
 * workers may open at once) and returns stores whose resolved writes are committed. Every append is one
 * statement; a second writer at the same head gets `ConcurrencyError`.
 * Rejects with `SchemaVersionError` when the schema was migrated by a newer loomwork, and at once with a
 * `ConfigError` naming the option when an option is not of its type or range (nothing is connected then).
 *
 * @example
 * const stores = await postgresStores({ url: process.env.DATABASE_URL });
 * const app = createApp(defineConfig({ stores, effects }));
 * // ...
 * await stores.close();
 */
export async function postgresStores(options: PostgresStoresOptions): Promise<PostgresStores> {
  // Checked whole before a pool is made: a bad option is refused at once, nothing connected or written.
  checkStoresOptions(options);
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const pool = options.pool ?? new pg.Pool({ connectionString: options.url, max: options.max ?? 10 });
  const connection: pg.ClientConfig = options.pool ? { ...options.pool.options } : { connectionString: options.url };
  const db = new PgDatabase(pool, schema, !options.pool, connection, options.preparedStatements ?? true);
  try {
    await db.migrate();
  } catch (error) {
    await db.close();
    throw error;
  }
  const fleet = new PostgresFleet(db, options.pollMs);
  const streams = new PostgresStreamFeed(db, options.pollMs ?? WORKER_DEFAULTS.pollMs, options.streamKeepMs);
  return {
    schema,
    db,
    events: new PostgresEventStore(db),
    content: new PostgresContentStore(db),
    keys: new PostgresKeyStore(db),
    schedules: new PostgresScheduleStore(db),
    fleet,
    streams,
    send: (executionId, event) => fleet.send(executionId, event),
    close: () => {
      streams.close();
      return db.close();
    },
  };
}

export { PostgresContentStore } from "./contentStore.js";
export { PostgresEventStore, type LeaseFence } from "./eventStore.js";
export { PostgresKeyStore } from "./keyStore.js";
export { PostgresScheduleStore } from "./schedules.js";
export { PostgresFleet } from "./fleetPort.js";
export { PostgresStreamFeed } from "./streamFeed.js";
export { LeaseLostError, SchemaVersionError, PostgresStoresClosedError } from "./errors.js";
export { POSTGRES_ERROR_CODES } from "./constants.js";
export { SCHEMA_VERSION } from "./migrations.js";
export { createWorker, type Worker, type WorkerOptions } from "./worker.js";
