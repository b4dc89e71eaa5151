// Pending approvals as the journal shows them: a model step's reply marks the tool calls that wait for a
// human (needsApproval); a TOOL_APPROVAL event decides one. Read by the read models (createReadModels(app)) and the CLI. And the two
// checks a decision passes before it is journaled: its shape (at every entry), and that its call is waiting
// (in the execution's turn, so that of two decisions sent at once only the first is journaled).
import type { AnyEventObject, AnyMachineSnapshot } from "xstate";
import { TOOL_APPROVAL_EVENT } from "../../machines/helpers/constants.js";
import type { ToolApprovalEvent } from "../../machines/helpers/messages.js";
import {
  EVENT_RECEIVED,
  EXECUTION_ENDED,
  STEP_COMPLETED,
  type JournalRecord,
  type RecordedEvent,
  type StepCompletedRecord,
} from "../../stores/schema.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";
import { ConfigError } from "../errors.js";

export { TOOL_APPROVAL_EVENT };

/**
 * `event` (a TOOL_APPROVAL) as a decision, or ApprovalMalformedError naming the field at fault: `toolCallId`
 * a non-empty string, `approved` a boolean, `reason` a string or absent (the decision's fields alone).
 */
export function checkApprovalShape(event: AnyEventObject, executionId?: string): ToolApprovalEvent {
  const toolCallId: unknown = event.toolCallId;
  const approved: unknown = event.approved;
  const reason: unknown = event.reason;
  if (typeof toolCallId !== "string" || toolCallId === "")
    throw new ApprovalMalformedError("toolCallId", toolCallId, executionId);
  if (typeof approved !== "boolean") throw new ApprovalMalformedError("approved", approved, executionId);
  if (reason !== undefined && typeof reason !== "string")
    throw new ApprovalMalformedError("reason", reason, executionId);
  return { type: TOOL_APPROVAL_EVENT, toolCallId, approved, ...(reason === undefined ? {} : { reason }) };
}

/**
 * Refuses (ApprovalNotWaitingError) a decision the execution would not take in `snapshot`: its machine has
 * no transition for it in the current state (agentLoop$ takes a TOOL_APPROVAL only for a call it parked and
 * that is still undecided), or the execution is no longer active. Called in the execution's turn, on the
 * state every earlier event left, never on a state read before the send was queued.
 */
export function checkApprovalWaiting(
  snapshot: AnyMachineSnapshot,
  decision: ToolApprovalEvent,
  executionId: string,
): void {
  if (snapshot.status === "active" && snapshot.can(decision)) return;
  throw new ApprovalNotWaitingError(
    executionId,
    decision.toolCallId,
    snapshot.status === "active" ? awaitingIn(snapshot.context) : [],
  );
}

// The calls an agent loop's context lists as parked (`AgentLoopContext.awaiting`); none for another machine.
function awaitingIn(context: unknown): string[] {
  const awaiting =
    typeof context === "object" && context !== null && "awaiting" in context ? context.awaiting : undefined;
  return Array.isArray(awaiting) ? awaiting.filter((id): id is string => typeof id === "string") : [];
}

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
  const calls: unknown[] =
    typeof output === "object" && output !== null && "toolCalls" in output && Array.isArray(output.toolCalls)
      ? output.toolCalls
      : [];
  const asked: PendingApproval[] = [];
  for (const call of calls) {
    if (typeof call !== "object" || call === null || !("needsApproval" in call) || call.needsApproval !== true)
      continue;
    const id = "id" in call && typeof call.id === "string" ? call.id : undefined;
    const toolName = "toolName" in call && typeof call.toolName === "string" ? call.toolName : "";
    if (id)
      asked.push({ toolCallId: id, toolName, input: "input" in call ? call.input : undefined, stepId: record.stepId });
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

/** A `TOOL_APPROVAL` that is not `{ type, toolCallId: non-empty string, approved: boolean, reason?: string }`; nothing was journaled. */
export class ApprovalMalformedError extends ConfigError {
  static override readonly name: string = "ApprovalMalformedError";
  constructor(
    /** The field at fault: `toolCallId`, `approved` or `reason`. */
    readonly field: "toolCallId" | "approved" | "reason",
    readonly actual: unknown,
    readonly executionId?: string,
  ) {
    const expected =
      field === "toolCallId"
        ? "a non-empty string (the id pendingApprovals lists)"
        : field === "approved"
          ? "true or false"
          : "a string, or absent";
    super(
      "send.event",
      `TOOL_APPROVAL${executionId === undefined ? "" : ` for execution "${executionId}"`} has ${field} ${JSON.stringify(actual) ?? "undefined"}; ` +
        `it must be ${expected}: send { type: "TOOL_APPROVAL", toolCallId, approved: true | false, reason? }.`,
      RUNTIME_ERROR_CODES.approvalMalformed,
    );
  }
}

/**
 * A `TOOL_APPROVAL` for a call that is not waiting for a decision: decided already (a second click), an id
 * the execution never parked, or an execution that has moved on or ended. Refused in the execution's turn,
 * before anything is journaled, so two decisions sent at once journal one. `waiting` lists the calls that
 * were waiting when it was refused.
 */
export class ApprovalNotWaitingError extends ConfigError {
  static override readonly name: string = "ApprovalNotWaitingError";
  constructor(
    readonly executionId: string,
    readonly toolCallId: string,
    readonly waiting: readonly string[],
  ) {
    super(
      "send.event",
      `TOOL_APPROVAL for call "${toolCallId}" of execution "${executionId}" was refused: that call is not waiting for a decision ` +
        `(${waiting.length ? `waiting: ${waiting.map((id) => `"${id}"`).join(", ")}` : "no call is waiting"}). It was decided already, ` +
        `or never asked; nothing was journaled. Read the calls still waiting from the read models (createReadModels(app): pendingApprovals).`,
      RUNTIME_ERROR_CODES.approvalNotWaiting,
    );
  }
}

/** One execution on the way from a tree's root to a parked call: its id and its agent (the logic's id). */
export interface ApprovalPathStep {
  executionId: string;
  /** The agent that runs it: its machine's id (`agentLoop$({ id })`). */
  agent?: string;
}

/** A call parked somewhere in a tree of executions (a sub-agent's, say), with where it waits. */
export interface TreePendingApproval extends PendingApproval {
  /** The execution that parked it (the one a decision is journaled in). */
  executionId: string;
  /** The executions from the tree's root (or the execution asked about) down to `executionId`, both included. */
  path: ApprovalPathStep[];
}

/** What `approvalsInTree` reads of an execution: its id, parent, logic and parked calls (a read model's view fits). */
export interface ApprovalSource {
  executionId: string;
  parentId?: string;
  logicId?: string;
  pendingApprovals: readonly PendingApproval[];
}

/**
 * The calls parked in the tree under `executionId` (itself and its child executions at any depth), each with the
 * execution that parked it and the path down to it from `executionId` (without one: every call of `views`, each
 * path from its topmost ancestor in `views`); in the order of `views` (pass them ordered by id).
 */
export function approvalsInTree(views: readonly ApprovalSource[], executionId?: string): TreePendingApproval[] {
  const byId = new Map(views.map((view) => [view.executionId, view]));
  const approvals: TreePendingApproval[] = [];
  for (const view of views) {
    if (view.pendingApprovals.length === 0) continue;
    const path = pathTo(byId, view, executionId);
    if (!path) continue;
    for (const approval of view.pendingApprovals) approvals.push({ executionId: view.executionId, ...approval, path });
  }
  return approvals;
}

// The steps from `top` down to `view` by parent links, or undefined when `view` is not under `top`.
function pathTo(
  byId: Map<string, ApprovalSource>,
  view: ApprovalSource,
  top: string | undefined,
): ApprovalPathStep[] | undefined {
  const path: ApprovalPathStep[] = [];
  const seen = new Set<string>();
  for (let at: ApprovalSource | undefined = view; at && !seen.has(at.executionId); at = byId.get(at.parentId ?? "")) {
    seen.add(at.executionId);
    path.unshift({ executionId: at.executionId, ...(at.logicId === undefined ? {} : { agent: at.logicId }) });
    if (at.executionId === top) return path;
    if (at.parentId === undefined || !byId.has(at.parentId)) return top === undefined ? path : undefined;
  }
  return undefined;
}

/** What `routeApproval` reads and does through the app that holds the tree. */
export interface ApprovalRoute {
  /** The execution and its child executions at any depth, with their parents (the catalogue: `app.executions({ root })`). */
  tree(executionId: string): Promise<{ executionId: string; parentId?: string; logicId?: string; status: string }[]>;
  /** Every record of an execution, opened. */
  log(executionId: string): Promise<JournalRecord[]>;
  /** Whether a completed step's effect is a model (only a model's reply parks calls). */
  isModel(effectId: string): boolean;
  /** Sends the decision to a descendant that waits for it, as an external event (checked there, in its turn). */
  deliver(executionId: string, decision: ToolApprovalEvent): Promise<void>;
}

/**
 * A decision sent to `executionId` for a call that waits in one of its child executions (a sub-agent's, at any
 * depth): delivered there, and the id it went to returned. Undefined when the execution has no running child
 * execution, or when no descendant waits for the call (the execution decides it, or refuses it, itself).
 * ApprovalAmbiguousError, nothing delivered, when the call waits in two executions of the tree.
 */
export async function routeApproval(
  route: ApprovalRoute,
  executionId: string,
  decision: ToolApprovalEvent,
): Promise<string | undefined> {
  const running = (await route.tree(executionId)).filter((info) => info.status === "running");
  if (!running.some((info) => info.executionId !== executionId)) return undefined;
  const waiting: string[] = [];
  for (const info of running) {
    let pending: PendingApproval[] = [];
    for (const record of await route.log(info.executionId))
      pending = pendingAfter(pending, record, record.type === STEP_COMPLETED && route.isModel(record.effectId));
    if (pending.some((approval) => approval.toolCallId === decision.toolCallId)) waiting.push(info.executionId);
  }
  if (waiting.length > 1) throw new ApprovalAmbiguousError(executionId, decision.toolCallId, waiting.sort());
  const target = waiting[0];
  if (target === undefined || target === executionId) return undefined;
  await route.deliver(target, decision);
  return target;
}

/**
 * A `TOOL_APPROVAL` sent to an execution of a tree for a call id that waits in two of its executions (two
 * sub-agents whose models gave no call ids, say): nothing was journaled. Send the decision to the execution that
 * should take it (`executionIds` lists them; the read models' `approvals(rootId)` gives each call's execution).
 */
export class ApprovalAmbiguousError extends ConfigError {
  static override readonly name: string = "ApprovalAmbiguousError";
  constructor(
    /** The execution the decision was sent to. */
    readonly executionId: string,
    readonly toolCallId: string,
    /** The executions of its tree where the call waits. */
    readonly executionIds: readonly string[],
  ) {
    super(
      "send.event",
      `TOOL_APPROVAL for call "${toolCallId}" sent to execution "${executionId}" was refused: that call id waits in ` +
        `${executionIds.length} executions of its tree (${executionIds.map((id) => `"${id}"`).join(", ")}); nothing was journaled. ` +
        `Send the decision to the execution that should take it: app.resume(id).send(...), or loomwork approve <id> <toolCallId>.`,
      RUNTIME_ERROR_CODES.approvalAmbiguous,
    );
  }
}
