import { EXECUTION_ENDED, EXECUTION_STARTED, isJournalRecord, type JournalRecord } from "./schema.js";
import type { ExecutionInfo, StoredRecord } from "./types.js";

// What a record changes in the catalogue entry: its start and its end (a sealed record keeps these fields readable).
function catalogued(info: ExecutionInfo, record: JournalRecord): ExecutionInfo {
  switch (record.type) {
    case EXECUTION_STARTED: {
      const next: ExecutionInfo = { ...info, startedAt: record.at, status: "running" };
      if (typeof record.subject === "string") next.subject = record.subject;
      if (typeof record.logicId === "string") next.logicId = record.logicId;
      return next;
    }
    case EXECUTION_ENDED:
      return { ...info, status: record.status, endedAt: record.at };
    default:
      return info;
  }
}

/**
 * Folds appended records into the catalogue entry; every adapter calls it inside its append so the
 * catalogue never disagrees with the log. A record of a type the schema does not know moves the head only.
 */
export function foldCatalogue(executionId: string, previous: ExecutionInfo | undefined, records: StoredRecord[]): ExecutionInfo {
  let info: ExecutionInfo = previous ?? { executionId, status: "running", startedAt: records[0]?.at ?? 0, head: 0 };
  for (const record of records) {
    if (isJournalRecord(record)) info = catalogued(info, record);
    info.head = record.seq;
  }
  return info;
}

/** Checks the seq fence shared by every adapter; returns the error message facts or undefined when fine. */
export function seqFenceViolation(head: number, expectedSeq: number, records: StoredRecord[]): string | undefined {
  if (head !== expectedSeq) return "stale";
  for (let i = 0; i < records.length; i++) {
    if (records[i]!.seq !== expectedSeq + 1 + i) return `record ${i} has seq ${records[i]!.seq}, expected ${expectedSeq + 1 + i}`;
  }
  return undefined;
}
