import { EXECUTION_ENDED, EXECUTION_STARTED } from "./schema.js";
import type { ExecutionInfo, ExecutionStatus, StoredRecord } from "./types.js";

/**
 * Folds appended records into the catalogue entry; every adapter calls it inside its append so the
 * catalogue never disagrees with the log.
 */
export function foldCatalogue(executionId: string, previous: ExecutionInfo | undefined, records: StoredRecord[]): ExecutionInfo {
  let info: ExecutionInfo = previous ?? { executionId, status: "running", startedAt: records[0]?.at ?? 0, head: 0 };
  for (const record of records) {
    if (record.type === EXECUTION_STARTED) {
      info = { ...info, startedAt: record.at, status: "running" };
      if (typeof record.subject === "string") info.subject = record.subject;
      if (typeof record.logicId === "string") info.logicId = record.logicId;
    } else if (record.type === EXECUTION_ENDED) {
      info = { ...info, status: record.status as ExecutionStatus, endedAt: record.at };
    }
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
