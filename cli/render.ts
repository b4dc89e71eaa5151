// Values as the timeline shows them: compact JSON cut to a width, claim-check envelopes as refs with
// their digest, tainted values with their origin, model replies as text and tool calls.
import { CLAIM_CHECK_KEY, CONTENT_REF_KEY, TAINT_KEY } from "../machines/helpers/constants.js";
import { bytes, printable } from "./terminal.js";

export interface Envelope {
  address: string;
  size: number;
  digest?: unknown;
  retain?: boolean;
}

/** The envelope `{ __loomClaimCheck, ref: { __loomContent }, size, digest?, retain? }`, or undefined. */
export function envelopeOf(value: unknown): Envelope | undefined {
  if (typeof value !== "object" || value === null || !(CLAIM_CHECK_KEY in value)) return undefined;
  const v = value as { ref?: Record<string, unknown>; size?: unknown; digest?: unknown; retain?: unknown };
  const address = v.ref?.[CONTENT_REF_KEY];
  if (typeof address !== "string") return undefined;
  return {
    address,
    size: typeof v.size === "number" ? v.size : 0,
    ...(v.digest === undefined ? {} : { digest: v.digest }),
    ...(v.retain ? { retain: true } : {}),
  };
}

/** Every envelope inside a value (depth-first), for counting refs. */
export function envelopesIn(value: unknown, found: Envelope[] = []): Envelope[] {
  if (typeof value !== "object" || value === null) return found;
  const envelope = envelopeOf(value);
  if (envelope) return (found.push(envelope), found);
  for (const child of Array.isArray(value) ? value : Object.values(value)) envelopesIn(child, found);
  return found;
}

const shortAddress = (address: string) =>
  address.length > 24 ? `${address.slice(0, 19)}…${address.slice(-4)}` : address;

export function envelopeText(envelope: Envelope, full: boolean): string {
  const digest =
    envelope.digest === undefined
      ? ""
      : ` digest ${full ? JSON.stringify(envelope.digest) : cut(JSON.stringify(envelope.digest), 72)}`;
  return printable(
    `⧉ ref ${full ? envelope.address : shortAddress(envelope.address)} (${bytes(envelope.size)}${envelope.retain ? ", retained" : ""})${digest}`,
  );
}

/** JSON text with envelopes and taint markers replaced by readable tokens. */
export function valueText(value: unknown, width: number, full = false): string {
  const envelope = envelopeOf(value);
  if (envelope) return envelopeText(envelope, full);
  if (isTaintedValue(value)) return `tainted(${printable(value[TAINT_KEY])}) ${valueText(value.value, width, full)}`;
  const text = JSON.stringify(value, (_key, v: unknown) => {
    const e = envelopeOf(v);
    if (e) return `⧉ ref ${shortAddress(e.address)} (${bytes(e.size)})`;
    if (isTaintedValue(v)) return { [`tainted(${v[TAINT_KEY]})`]: v.value };
    return v;
  });
  if (text === undefined) return "undefined";
  // JSON escapes C0 controls; DEL and C1 are escaped here, before the cut counts characters.
  if (full) return printable(text);
  const summary = Array.isArray(value) ? `[${value.length} item${value.length === 1 ? "" : "s"}] ` : "";
  return summary + cut(printable(text), Math.max(16, width - summary.length));
}

function isTaintedValue(value: unknown): value is { [TAINT_KEY]: string; value: unknown } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Record<string, unknown>)[TAINT_KEY] === "string" &&
    "value" in value
  );
}

export function cut(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, width - 1).join("")}…`;
}

interface ReplyLike {
  text?: unknown;
  toolCalls?: { toolName?: unknown; input?: unknown }[];
  usage?: { inputTokens?: unknown; outputTokens?: unknown };
}

/** What the short form shows of a reply; a model's reply may carry only these and the keys below beside them. */
const SHOWN_KEYS = ["text", "toolCalls", "usage"];
/** ModelReply's other keys (fromAiSdk fills them): kept in the journal and --json, out of the short form. */
const UNSHOWN_KEYS = ["finishReason", "reasoning", "providerMetadata", "response", "parts"];

/**
 * A model reply as `"text" → tool(input), tool(input) · 212+31 tokens`, or undefined for anything else:
 * an object with text, toolCalls or usage and no key a ModelReply does not have.
 */
export function replyText(value: unknown, width: number, full: boolean): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const reply = value as ReplyLike;
  const keys = Object.keys(reply);
  if (!keys.some((k) => SHOWN_KEYS.includes(k))) return undefined;
  if (keys.some((k) => !SHOWN_KEYS.includes(k) && !UNSHOWN_KEYS.includes(k))) return undefined;
  const parts: string[] = [];
  const calls = Array.isArray(reply.toolCalls) ? reply.toolCalls : [];
  // The tool calls say most about a turn: the text gets a third of the line when there are calls.
  const textWidth = calls.length ? Math.max(16, Math.floor(width / 3)) : width;
  if (typeof reply.text === "string" && reply.text)
    parts.push(full ? JSON.stringify(reply.text) : cut(JSON.stringify(reply.text), textWidth));
  if (calls.length)
    parts.push(
      `→ ${calls.map((c) => `${String(c.toolName)}(${valueText(c.input, full ? Infinity : 40, full)})`).join(", ")}`,
    );
  const usage = reply.usage;
  const tokens =
    usage && typeof usage.inputTokens === "number"
      ? ` · ${usage.inputTokens}+${String(usage.outputTokens)} tokens`
      : "";
  const line = printable(`${parts.join(" ") || "(empty reply)"}${tokens}`);
  return full ? line : cut(line, width);
}
