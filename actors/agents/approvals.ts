// Pending approvals as the journal shows them: a model step's reply marks the tool calls that wait for a
// human (needsApproval); a TOOL_APPROVAL event decides one. Read by app.readModels and the CLI.
import { TOOL_APPROVAL_EVENT } from "../../machines/helpers/constants.js";
import { EVENT_RECEIVED, EXECUTION_ENDED, STEP_COMPLETED, type JournalRecord, type RecordedEvent, type StepCompletedRecord } from "../../stores/schema.js";

export { TOOL_APPROVAL_EVENT };

/** A tool call parked until a human decides: send `{ type: "TOOL_APPROVAL", toolCallId, approved, reason? }`. */
export interface PendingApproval {
  toolCallId: string;
  toolName: string;
  input: unknown;
  /** The model step whose reply asked for the call. */
  stepId: string;
}

/** The calls a model step's journaled reply parked for approval. */
export function approvalsAsked(record: StepCompletedRecord): PendingApproval[] {
  const output = record.output;
  const calls: unknown[] = typeof output === "object" && output !== null && "toolCalls" in output && Array.isArray(output.toolCalls) ? output.toolCalls : [];
  const asked: PendingApproval[] = [];
  for (const call of calls) {
    if (typeof call !== "object" || call === null || !("needsApproval" in call) || call.needsApproval !== true) continue;
    const id = "id" in call && typeof call.id === "string" ? call.id : undefined;
    const toolName = "toolName" in call && typeof call.toolName === "string" ? call.toolName : "";
    if (id) asked.push({ toolCallId: id, toolName, input: "input" in call ? call.input : undefined, stepId: record.stepId });
  }
  return asked;
}

/** Whether a journaled event is the decision on `approval`. */
export function decides(event: RecordedEvent, approval: PendingApproval): boolean {
  return event.type === TOOL_APPROVAL_EVENT && "toolCallId" in event && event.toolCallId === approval.toolCallId;
}

/**
 * The calls still parked after `record`: a model step's reply adds the ones it parked, a TOOL_APPROVAL
 * decides one, the end clears them. `fromModel` says whether a completed step's effect is a model.
 */
export function pendingAfter(pending: PendingApproval[], record: JournalRecord, fromModel = true): PendingApproval[] {
  switch (record.type) {
    case STEP_COMPLETED:
      return fromModel ? [...pending, ...approvalsAsked(record)] : pending;
    case EVENT_RECEIVED:
      return pending.filter((a) => !decides(record.event, a));
    case EXECUTION_ENDED:
      return [];
    default:
      return pending;
  }
}
