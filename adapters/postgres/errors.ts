// The PostgreSQL adapter's errors; each extends LoomworkError and takes its code from POSTGRES_ERROR_CODES.
import { LoomworkError } from "../../stores/errors.js";
import { POSTGRES_ERROR_CODES } from "./constants.js";

/**
 * A worker appended to an execution whose lease it no longer holds (it expired while the worker was
 * paused or partitioned, or another worker took the execution over). Nothing was written; the worker
 * drops the execution and the lease holder continues it from the journal.
 */
export class LeaseLostError extends LoomworkError {
  readonly executionId: string;
  readonly owner: string;
  constructor(executionId: string, owner: string) {
    super(
      POSTGRES_ERROR_CODES.leaseLost,
      `Execution "${executionId}": worker "${owner}" no longer holds its lease (expired or taken over); the append was refused and nothing was written. The lease holder resumes it from the journal.`,
    );
    this.executionId = executionId;
    this.owner = owner;
  }
}

/** The database's schema was migrated by a newer loomwork than this one. */
export class SchemaVersionError extends LoomworkError {
  readonly schema: string;
  readonly found: number;
  readonly known: number;
  constructor(schema: string, found: number, known: number) {
    super(
      POSTGRES_ERROR_CODES.schemaVersion,
      `PostgreSQL schema "${schema}" is at version ${found}, newer than the ${known} this loomwork knows; upgrade loomwork on this machine before it writes there.`,
    );
    this.schema = schema;
    this.found = found;
    this.known = known;
  }
}

/** The stores were closed (their pool ended) and were used again. */
export class PostgresStoresClosedError extends LoomworkError {
  constructor(what: string) {
    super(POSTGRES_ERROR_CODES.closed, `PostgreSQL stores were closed; cannot ${what}. Open them again with postgresStores().`);
  }
}
