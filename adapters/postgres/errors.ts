// The PostgreSQL adapter's errors; each extends LoomworkError and takes its code from POSTGRES_ERROR_CODES.
import { LoomworkError } from "../../stores/errors.js";
import { POSTGRES_ERROR_CODES } from "./constants.js";

/**
 * A worker appended to an execution whose lease it no longer holds (it expired while the worker was
 * paused or partitioned, or another worker took the execution over), or was about to start one of its
 * steps when its lease may have run out (`stepId`). Nothing was written and the step was not started; the
 * worker drops the execution and the lease holder continues it from the journal.
 */
export class LeaseLostError extends LoomworkError {
  static override readonly name: string = "LeaseLostError";
  constructor(
    readonly executionId: string,
    /** The worker whose lease was lost. */
    readonly owner: string,
    /** The step the worker did not start, when the lease was found lost before an effect rather than at an append. */
    readonly stepId?: string,
  ) {
    super(
      POSTGRES_ERROR_CODES.leaseLost,
      stepId === undefined
        ? `Execution "${executionId}": worker "${owner}" no longer holds its lease (expired or taken over); the append was refused and nothing was written. The lease holder resumes it from the journal.`
        : `Execution "${executionId}": worker "${owner}" may no longer hold its lease (its last heartbeat is older than leaseMs), so step "${stepId}" was not started and nothing was written. The lease holder resumes it from the journal.`,
    );
  }
}

/** The database's schema was migrated by a newer loomwork than this one. */
export class SchemaVersionError extends LoomworkError {
  static override readonly name: string = "SchemaVersionError";
  constructor(
    readonly schema: string,
    /** The schema version the database is at. */
    readonly found: number,
    /** The newest schema version this loomwork knows. */
    readonly known: number,
  ) {
    super(
      POSTGRES_ERROR_CODES.schemaVersion,
      `PostgreSQL schema "${schema}" is at version ${found}, newer than the ${known} this loomwork knows; upgrade loomwork on this machine before it writes there.`,
    );
  }
}

/** The stores were closed (their pool ended) and were used again. */
export class PostgresStoresClosedError extends LoomworkError {
  static override readonly name: string = "PostgresStoresClosedError";
  constructor(what: string) {
    super(
      POSTGRES_ERROR_CODES.closed,
      `PostgreSQL stores were closed; cannot ${what}. Open them again with postgresStores().`,
    );
  }
}
