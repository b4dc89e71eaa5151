import {
  EXECUTION_ENDED,
  EXECUTION_MIGRATED,
  EXECUTION_STARTED,
  isJournalRecord,
  type JournalRecord,
} from "./schema.js";
import { ConcurrencyError } from "./errors.js";
import type { ExecutionInfo, StoredRecord } from "./types.js";

// What a record changes in the catalogue entry: its start and its end (a sealed record keeps these fields readable).
function catalogued(info: ExecutionInfo, record: JournalRecord): ExecutionInfo {
  switch (record.type) {
    case EXECUTION_STARTED: {
      const next: ExecutionInfo = { ...info, startedAt: record.at, status: "running" };
      if (typeof record.subject === "string") next.subject = record.subject;
      if (typeof record.logicId === "string") next.logicId = record.logicId;
      if (typeof record.machineHash === "string") next.machineHash = record.machineHash;
      if (typeof record.version === "string") next.version = record.version;
      const parent: unknown = record.parent;
      if (
        typeof parent === "object" &&
        parent !== null &&
        "executionId" in parent &&
        typeof parent.executionId === "string"
      )
        next.parentId = parent.executionId;
      if (typeof record.root === "string") next.rootId = record.root;
      return next;
    }
    case EXECUTION_ENDED:
      return { ...info, status: record.status, endedAt: record.at };
    // A migration moves the execution to another version of its logic: the catalogue names the one it runs now.
    case EXECUTION_MIGRATED: {
      const { version: _previous, ...rest } = info;
      return {
        ...rest,
        ...(typeof record.machineHash === "string" ? { machineHash: record.machineHash } : {}),
        ...(typeof record.version === "string" ? { version: record.version } : {}),
      };
    }
    default:
      return info;
  }
}

/**
 * Folds appended records into the catalogue entry (a new object; `previous` is left as it was). A record
 * of a type the schema does not know moves the head only.
 */
export function foldCatalogue(
  executionId: string,
  previous: ExecutionInfo | undefined,
  records: StoredRecord[],
): ExecutionInfo {
  let info: ExecutionInfo = previous
    ? { ...previous }
    : { executionId, status: "running", startedAt: records[0]?.at ?? 0, head: 0 };
  for (const record of records) {
    if (isJournalRecord(record)) info = catalogued(info, record);
    info.head = record.seq;
  }
  return info;
}

/**
 * The catalogue entry an append leaves, after the seq fence every adapter checks inside its append, so
 * the catalogue never disagrees with the log: a stale `expectedSeq` is a ConcurrencyError (the log never
 * forks), records that do not continue the log contiguously a RangeError. Undefined for an empty append.
 */
export function appendToCatalogue(
  executionId: string,
  previous: ExecutionInfo | undefined,
  expectedSeq: number,
  records: StoredRecord[],
): ExecutionInfo | undefined {
  const head = previous?.head ?? 0;
  if (head !== expectedSeq) throw new ConcurrencyError(executionId, expectedSeq, head);
  assertContiguous(executionId, expectedSeq, records);
  return records.length === 0 ? undefined : foldCatalogue(executionId, previous, records);
}

/** Throws a RangeError unless `records` carry the seqs `expectedSeq + 1`, `+ 2`, ... in order (an adapter whose store checks the head itself, as PostgreSQL's unique key does, checks only this). */
export function assertContiguous(executionId: string, expectedSeq: number, records: readonly StoredRecord[]): void {
  records.forEach((record, i) => {
    if (record.seq !== expectedSeq + 1 + i) {
      throw new RangeError(
        `Execution "${executionId}": record ${i} has seq ${record.seq}, expected ${expectedSeq + 1 + i}; seqs must continue the log contiguously.`,
      );
    }
  });
}
