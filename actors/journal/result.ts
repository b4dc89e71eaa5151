// app.result for an execution this app does not run: its settled outcome, the end its journal records, the
// outcome of a fleet worker (a submitted start), or else a resume here that runs it to its end.
import { EXECUTION_ENDED } from "../../stores/schema.js";
import type { EventStore, JournalRecord, Stores } from "../../stores/types.js";
import { UnknownExecutionError } from "../errors.js";
import { submittedOutcome } from "../fleet/submit.js";
import { erasedExecutionError } from "../lifecycle/erasureStatus.js";
import { outcomeFrom, type Outcomes } from "./outcomes.js";

/** What the journal's answer needs of the app. */
export interface ResultSource {
  readonly stores: Stores & { readonly events: EventStore };
  readonly outcomes: Outcomes;
  log(executionId: string): Promise<JournalRecord[]>;
  /** Resumes the execution here and resolves with its outcome. */
  resumeToEnd(executionId: string): Promise<unknown>;
}

export async function resultFromJournal(app: ResultSource, executionId: string): Promise<unknown> {
  const settled = app.outcomes.settledOf(executionId);
  if (settled) return outcomeFrom(executionId, settled);
  const records = await app.log(executionId);
  if (records.length === 0)
    throw (await erasedExecutionError(app.stores.events, executionId)) ?? new UnknownExecutionError(executionId);
  const ended = records.findLast((r) => r.type === EXECUTION_ENDED);
  if (ended) return outcomeFrom(executionId, ended);
  const fleet = app.stores.fleet;
  if (fleet && (await fleet.isSubmitted(executionId)))
    return submittedOutcome(fleet, app.stores.events, executionId, (id) => app.log(id));
  return app.resumeToEnd(executionId);
}
