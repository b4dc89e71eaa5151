// The transcript arithmetic the agent machines share (agentLoop and conversation): byte counts, the
// compaction split, the summary message and the claim-check refusal of a model turn. Pure.
import { CLAIM_CHECK_KEY } from "./constants.js";
import type { Message, ReplyPart } from "./messages.js";
import { isTainted, taintOrigins, tainted } from "./taint.js";

/** Origin of a summary that folded tainted content: it stays tainted (ADR 0137 D2). */
export const SUMMARY_ORIGIN = "agent:summary";

/** The run's error (a TypeError) when a model or summary result comes back as a claim-check envelope. */
export const ENVELOPE_IN_MODEL_TURN =
  "came back as a claim-check envelope: execution.claimCheck.toolIds must list only tools, never the model or the summarizer effect (ADR 0140 D2/D9)";

const encoder = new TextEncoder();

/** UTF-8 bytes of one message's JSON: the loop keeps a running sum, never re-serializing the transcript whole. */
export function messageBytes(message: Message): number {
  return encoder.encode(JSON.stringify(message)).length;
}

export function bytesOf(messages: Message[]): number {
  return messages.reduce((n, m) => n + messageBytes(m), 0);
}

/** True for a claim-check envelope, tainted or not: a model or summary result must never be one. */
export function isEnvelope(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    (CLAIM_CHECK_KEY in value || (isTainted(value) && isEnvelope(value.value)))
  );
}

/** Splits the transcript for compaction: the system prompt, what to fold, and the newest turn kept verbatim. */
export function compactionSplit(messages: Message[]): { system: Message[]; fold: Message[]; keep: Message[] } {
  const system = messages[0]?.role === "system" ? [messages[0]] : [];
  const rest = messages.slice(system.length);
  let lastAssistant = -1;
  for (let i = rest.length - 1; i >= 0; i--) {
    if (rest[i]!.role === "assistant") {
      lastAssistant = i;
      break;
    }
  }
  const cut = lastAssistant >= 0 ? lastAssistant : Math.max(0, rest.length - 1);
  return { system, fold: rest.slice(0, cut), keep: rest.slice(cut) };
}

/** The `summary` field of a summarizer's output (`{ summary }`), whatever came back. */
export function summaryOf(output: unknown): unknown {
  return typeof output === "object" && output !== null && "summary" in output ? output.summary : undefined;
}

/** The transcript once `summary` replaced what compactionSplit folds; the summary stays tainted when the fold was. */
export function compacted(messages: Message[], summary: unknown): Message[] {
  const { system, fold, keep } = compactionSplit(messages);
  const text = `Summary of the conversation so far:\n${String(summary ?? "")}`;
  const message: Message = { role: "user", content: taintOrigins(fold).length ? tainted(text, SUMMARY_ORIGIN) : text };
  return [...system, message, ...keep];
}

/**
 * A model step's output as the loop reads it: `text` ("" when absent) and `toolCalls` ([] when absent). The llm
 * effect refuses any reply that is not a ModelReply (checkModelReply), so a field of another type reads as absent.
 */
export function replyOf(output: unknown): {
  text: string;
  toolCalls: { id?: string; toolName: string; input: unknown; needsApproval?: boolean }[];
  parts?: ReplyPart[];
} {
  if (typeof output !== "object" || output === null) return { text: "", toolCalls: [] };
  const parts = "parts" in output && Array.isArray(output.parts) ? output.parts.filter(isReplyPart) : [];
  const text = "text" in output && typeof output.text === "string" ? output.text : "";
  const calls: unknown[] = "toolCalls" in output && Array.isArray(output.toolCalls) ? output.toolCalls : [];
  const toolCalls = calls.map((call) => ({
    ...(typeof call === "object" && call !== null && "id" in call && typeof call.id === "string" && call.id !== ""
      ? { id: call.id }
      : {}),
    toolName:
      typeof call === "object" && call !== null && "toolName" in call && typeof call.toolName === "string"
        ? call.toolName
        : "",
    input: typeof call === "object" && call !== null && "input" in call ? call.input : undefined,
    ...(typeof call === "object" && call !== null && "needsApproval" in call && call.needsApproval === true
      ? { needsApproval: true }
      : {}),
  }));
  return { text, toolCalls, ...(parts.length ? { parts } : {}) };
}

// A provider's adapter reads each part's fields defensively: here only its being an object is checked.
function isReplyPart(part: unknown): part is ReplyPart {
  return typeof part === "object" && part !== null;
}

/** The text a failed tool call is answered with: its error's `message`, or the error itself as a string. */
export function errorMessageOf(error: unknown): unknown {
  return (
    (typeof error === "object" && error !== null && "message" in error ? error.message : undefined) ?? String(error)
  );
}

/**
 * Whether a tool message's content is an error result: `{ error }` (the tool threw, refused its input, or
 * does not exist), or `{ error, denied: true }` (a human denied the call). A provider sends it as an error.
 */
export function isErrorResult(content: unknown): content is { error: unknown; denied?: boolean } {
  if (typeof content !== "object" || content === null || Array.isArray(content) || !("error" in content)) return false;
  return Object.keys(content).every((key) => key === "error" || key === "denied");
}
