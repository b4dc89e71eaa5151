// The answers `useChat` sends back for parked tool calls, as TOOL_APPROVAL events. `addToolApprovalResponse`
// marks the tool part `approval-responded` with `approval: { id, approved, reason? }`, and the next request
// (the route's `messages`) carries that message: each such part of the last assistant message is one decision,
// checked as every external event is (checkExternalEvent) before a route sends it.
import { TOOL_APPROVAL_EVENT } from "../../machines/helpers/constants.js";
import type { ToolApprovalEvent } from "../../machines/helpers/messages.js";
import { shown } from "../../stores/shapes.js";
import { ConfigError } from "../errors.js";
import { checkExternalEvent } from "../journal/externalEvents.js";
import { checkApprovalShape } from "./approvals.js";
import type { UIMessageLike } from "./uiMessageStream.js";

/**
 * The TOOL_APPROVAL events a chat request's messages answer (what `useChat`'s `addToolApprovalResponse`
 * sends back): one per tool part of the last message, if it is an assistant message, in the state
 * `approval-responded`. Each is checked as every external event is: a malformed answer (an `approved` that
 * is not a boolean, a `reason` that is not a string, no `toolCallId`) throws ApprovalMalformedError, and
 * `messages` that is not an array of messages a ConfigError. Send them with `actor.sendAsync(event)`, which
 * refuses a call that is not waiting (ApprovalNotWaitingError), then answer with
 * `app.stream(id).toUIMessageStream({ originalMessages: messages })`.
 *
 * @example
 * for (const event of convertToToolApprovalEvents(messages)) await actor.sendAsync(event);
 */
export function convertToToolApprovalEvents(messages: readonly UIMessageLike[]): ToolApprovalEvent[] {
  if (!Array.isArray(messages))
    throw new ConfigError("convertToToolApprovalEvents.messages", `an array of UI messages; got ${shown(messages)}.`);
  const last: unknown = messages.at(-1);
  if (last === undefined) return [];
  if (
    typeof last !== "object" ||
    last === null ||
    !("role" in last) ||
    !("parts" in last) ||
    !Array.isArray(last.parts)
  )
    throw new ConfigError(
      "convertToToolApprovalEvents.messages",
      `each message is { id, role, parts: [...] }; the last is ${shown(last)}.`,
    );
  if (last.role !== "assistant") return [];
  const events: ToolApprovalEvent[] = [];
  const parts: unknown[] = last.parts;
  for (const part of parts) {
    if (typeof part !== "object" || part === null || !("state" in part) || part.state !== "approval-responded")
      continue;
    const approval: unknown = "approval" in part ? part.approval : undefined;
    const answer = typeof approval === "object" && approval !== null ? approval : {};
    const event = {
      type: TOOL_APPROVAL_EVENT,
      toolCallId: "toolCallId" in part ? part.toolCallId : undefined,
      approved: "approved" in answer ? answer.approved : undefined,
      ...("reason" in answer && answer.reason !== undefined ? { reason: answer.reason } : {}),
    };
    // The check every entry makes (ApprovalMalformedError for a bad answer); its decision's fields, typed.
    events.push(checkApprovalShape(checkExternalEvent(event)));
  }
  return events;
}
