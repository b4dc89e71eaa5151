import {
  ERASURE_CONTENT_DELETE_INTENDED,
  ERASURE_CONTENT_DELETED,
  EVENT_RECEIVED,
  EXECUTION_ENDED,
  EXECUTION_STARTED,
  foldRecord,
  isJournalRecord,
  STEP_COMPLETED,
  STEP_FAILED,
  TIMER_SET,
  TRANSITION,
  type RecordHandlers,
} from "./schema.js";
import type { ExecutionInfo, StoredRecord } from "./types.js";

const unchanged = (info: ExecutionInfo) => info;

// What each record type changes in the catalogue entry (a sealed record keeps these fields readable).
const CATALOGUE: RecordHandlers<ExecutionInfo, ExecutionInfo> = {
  [EXECUTION_STARTED]: (info, record) => {
    const next: ExecutionInfo = { ...info, startedAt: record.at, status: "running" };
    if (typeof record.subject === "string") next.subject = record.subject;
    if (typeof record.logicId === "string") next.logicId = record.logicId;
    return next;
  },
  [EXECUTION_ENDED]: (info, record) => ({ ...info, status: record.status, endedAt: record.at }),
  [EVENT_RECEIVED]: unchanged,
  [STEP_COMPLETED]: unchanged,
  [STEP_FAILED]: unchanged,
  [TIMER_SET]: unchanged,
  [TRANSITION]: unchanged,
  [ERASURE_CONTENT_DELETE_INTENDED]: unchanged,
  [ERASURE_CONTENT_DELETED]: unchanged,
};

/**
 * Folds appended records into the catalogue entry; every adapter calls it inside its append so the
 * catalogue never disagrees with the log. A record of a type the schema does not know moves the head only.
 */
export function foldCatalogue(executionId: string, previous: ExecutionInfo | undefined, records: StoredRecord[]): ExecutionInfo {
  let info: ExecutionInfo = previous ?? { executionId, status: "running", startedAt: records[0]?.at ?? 0, head: 0 };
  for (const record of records) {
    if (isJournalRecord(record)) info = foldRecord(CATALOGUE, info, record);
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
