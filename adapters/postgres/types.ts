// The type of what postgresStores returns, apart so the worker can name it without importing the entry point.
import type { Stores } from "../../stores/types.js";
import type { PostgresContentStore } from "./contentStore.js";
import type { PgDatabase } from "./database.js";
import type { PostgresEventStore } from "./eventStore.js";
import type { PostgresFleet } from "./fleetPort.js";
import type { PostgresKeyStore } from "./keyStore.js";
import type { PostgresScheduleStore } from "./schedules.js";
import type { PostgresStreamFeed } from "./streamFeed.js";

/** The three stores on one database schema; they share one pool: closing any of them closes all three. */
export interface PostgresStores extends Stores {
  readonly schema: string;
  events: PostgresEventStore;
  content: PostgresContentStore;
  keys: PostgresKeyStore;
  /** The schedules (loomwork/schedules), fired by the fleet's workers. */
  schedules: PostgresScheduleStore;
  /** The fleet's queue and inboxes (app.submit, createWorker). */
  fleet: PostgresFleet;
  /** What workers stream of their executions, followed by `app.stream` in any process on these stores (ADR 0019). */
  streams: PostgresStreamFeed;
  /** @internal What the stores share (the pool, the schema, the LISTEN connection). */
  readonly db: PgDatabase;
  /**
   * Delivers an event to an execution, whichever worker runs it: put in its inbox in the database, journaled
   * and delivered by the worker holding its lease (now, or after a takeover).
   */
  send(executionId: string, event: { type: string; [key: string]: unknown }): Promise<void>;
  /** Ends the pool (when the stores made it) and the LISTEN connection. Idempotent. */
  close(): Promise<void>;
}
