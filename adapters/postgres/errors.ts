// The PostgreSQL adapter's errors; each extends LoomworkError and takes its code from POSTGRES_ERROR_CODES.
import { LoomworkError } from "../../stores/errors.js";
import { POSTGRES_ERROR_CODES } from "./constants.js";

/**
 * A worker appended to an execution whose lease it no longer holds (it expired while the worker was
 * paused or partitioned, or another worker took the execution over). Nothing was written; the worker
 * drops the execution and the lease holder continues it from the journal.
 */
export class LeaseLostError extends LoomworkError {
  static override readonly name: string = "LeaseLostError";
  constructor(
    readonly executionId: string,
    /** The worker whose lease was lost. */
    readonly owner: string,
  ) {
    super(
      POSTGRES_ERROR_CODES.leaseLost,
      `Execution "${executionId}": worker "${owner}" no longer holds its lease (expired or taken over); the append was refused and nothing was written. The lease holder resumes it from the journal.`,
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
    super(POSTGRES_ERROR_CODES.closed, `PostgreSQL stores were closed; cannot ${what}. Open them again with postgresStores().`);
  }
}
