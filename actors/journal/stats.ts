// app.stats: the sizes an execution costs, for measuring (the bench, the CLI's stats, tests).
import type { EventStore } from "../../stores/types.js";
import { utf8Length } from "../../stores/bytes.js";
import { UnknownExecutionError } from "../errors.js";

/** `app.stats(id)`: UTF-8 bytes of the records' JSON text, and of the folded state at the log's head. */
export interface ExecutionStats {
  records: number;
  logBytes: number;
  stateBytes: number;
}

/**
 * Counts the stored records (archived and live, as stored: sealed ones sealed) and their bytes, and the
 * bytes of the state `folded` resolves (the live execution's, or one rebuilt from the journal).
 */
export async function measureExecution(
  events: EventStore,
  executionId: string,
  folded: () => Promise<{ persistedState(): unknown }>,
): Promise<ExecutionStats> {
  const records = [
    ...(await events.readArchives(executionId)).flatMap((s) => s.records),
    ...(await events.read(executionId)),
  ];
  if (records.length === 0) throw new UnknownExecutionError(executionId);
  const logBytes = records.reduce((sum, r) => sum + utf8Length(JSON.stringify(r)), 0);
  const execution = await folded();
  return { records: records.length, logBytes, stateBytes: utf8Length(JSON.stringify(execution.persistedState())) };
}
