// An AI SDK reply (v2, v3 or v4 shapes) read into a ModelReply: text, reasoning, the tool calls with the
// provider's ids, finish reason, usage and provider metadata. Every field is narrowed, none cast.
import { RUNTIME_ERROR_CODES } from "../../actors/constants.js";
import type { ModelReply, ReplyPart, ReplyToolCall, Usage } from "../../machines/helpers/messages.js";
import { LoomworkTypeError } from "../../stores/errors.js";
import { isObject } from "../../stores/shapes.js";
import type { AiSdkPart } from "./types.js";

/** The AI SDK returned a tool call whose input is not JSON. A `TypeError`, as before it had a `code`. */
export class AiSdkReplyError extends LoomworkTypeError {
  static override readonly name: string = "AiSdkReplyError";
  constructor(message: string) {
    super(RUNTIME_ERROR_CODES.aiSdkReply, message);
  }
}

/** What a reply is assembled from: the same for a generated reply and a consumed stream. */
export interface ReplyParts {
  text: string;
  reasoning: string;
  toolCalls: ReplyToolCall[];
  /** The reasoning, text and tool-call parts in order, each with the provider's metadata. */
  parts: ReplyPart[];
  finishReason?: unknown;
  usage?: unknown;
  providerMetadata?: unknown;
  /** The response's metadata: its `id` and `modelId` are kept. */
  response?: unknown;
}

/** A generated result's content read into reply parts. */
export function partsOfContent(content: readonly AiSdkPart[]): ReplyParts {
  const parts: ReplyParts = { text: "", reasoning: "", toolCalls: [], parts: [] };
  for (const part of content) {
    const providerMetadata = metadataOf(part);
    if (part.type === "text") {
      const text = stringField(part, "text");
      parts.text += text;
      parts.parts.push({ type: "text", text, ...providerMetadata });
    } else if (part.type === "reasoning") {
      const text = stringField(part, "text");
      parts.reasoning += text;
      parts.parts.push({ type: "reasoning", text, ...providerMetadata });
    } else if (part.type === "tool-call") {
      const call = toolCallOf(part);
      if (!call) continue;
      parts.toolCalls.push(call);
      parts.parts.push({ type: "tool-call", ...(call.id ? { toolCallId: call.id } : {}), ...providerMetadata });
    }
  }
  return parts;
}

/** A part's provider metadata, as a field to spread: none when absent or empty. */
export function metadataOf(part: object): { providerMetadata?: Record<string, unknown> } {
  const metadata: unknown = Reflect.get(part, "providerMetadata");
  return isObject(metadata) && Object.keys(metadata).length > 0 ? { providerMetadata: metadata } : {};
}

/** A `tool-call` part as a reply's tool call; none for a call the provider executed itself. */
export function toolCallOf(part: AiSdkPart): ReplyToolCall | undefined {
  if ("providerExecuted" in part && part.providerExecuted === true) return undefined;
  const toolName = stringField(part, "toolName");
  const id = stringField(part, "toolCallId");
  return { ...(id ? { id } : {}), toolName, input: parseInput("input" in part ? part.input : undefined, toolName) };
}

/** The ModelReply, compact: a field only when it says something. */
export function replyOf(parts: ReplyParts): ModelReply {
  const usage = usageOf(parts.usage);
  const finishReason = finishReasonOf(parts.finishReason);
  const response = responseOf(parts.response);
  const metadata =
    isObject(parts.providerMetadata) && Object.keys(parts.providerMetadata).length > 0
      ? parts.providerMetadata
      : undefined;
  return {
    ...(parts.text ? { text: parts.text } : {}),
    ...(parts.toolCalls.length ? { toolCalls: parts.toolCalls } : {}),
    ...(usage ? { usage } : {}),
    ...(finishReason ? { finishReason } : {}),
    ...(parts.reasoning ? { reasoning: parts.reasoning } : {}),
    ...(metadata ? { providerMetadata: metadata } : {}),
    ...(response ? { response } : {}),
    // The parts are kept only when the provider said something of one: that is what it needs back.
    ...(parts.parts.some((p) => p.providerMetadata) ? { parts: withoutRepeatedText(parts.parts) } : {}),
  };
}

// A reply's only text part holds the reply's `text`: it is journaled once, there (the prompt reads it back).
function withoutRepeatedText(parts: ReplyPart[]): ReplyPart[] {
  if (parts.filter((p) => p.type === "text").length !== 1) return parts;
  return parts.map(({ text, ...part }) =>
    part.type === "text" ? part : { ...part, ...(text === undefined ? {} : { text }) },
  );
}

// The response's id and the model that answered: what telemetry reports (gen_ai.response.*).
function responseOf(value: unknown): ModelReply["response"] {
  if (!isObject(value)) return undefined;
  const id = typeof value.id === "string" && value.id !== "" ? value.id : undefined;
  const modelId = typeof value.modelId === "string" && value.modelId !== "" ? value.modelId : undefined;
  return id || modelId ? { ...(id ? { id } : {}), ...(modelId ? { modelId } : {}) } : undefined;
}

// v2: a string; v3 and v4: { unified, raw }.
function finishReasonOf(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (isObject(value) && typeof value.unified === "string") return value.unified;
  return undefined;
}

// v2: { inputTokens, outputTokens, reasoningTokens?, cachedInputTokens? } as numbers; v3 and v4:
// { inputTokens: { total, cacheRead, ... }, outputTokens: { total, reasoning, ... } }.
function usageOf(value: unknown): Usage | undefined {
  if (!isObject(value)) return undefined;
  const input = value.inputTokens;
  const output = value.outputTokens;
  const inputTokens = isObject(input) ? numberOf(input.total) : numberOf(input);
  const outputTokens = isObject(output) ? numberOf(output.total) : numberOf(output);
  const reasoningTokens = isObject(output) ? numberOf(output.reasoning) : numberOf(value.reasoningTokens);
  const cachedInputTokens = isObject(input) ? numberOf(input.cacheRead) : numberOf(value.cachedInputTokens);
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  return {
    inputTokens: inputTokens ?? 0,
    outputTokens: outputTokens ?? 0,
    ...(reasoningTokens ? { reasoningTokens } : {}),
    ...(cachedInputTokens ? { cachedInputTokens } : {}),
  };
}

function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A string field of a part, "" when absent. */
export function stringField(part: object, key: string): string {
  const value: unknown = Reflect.get(part, key);
  return typeof value === "string" ? value : "";
}

function parseInput(input: unknown, toolName: string): unknown {
  if (typeof input !== "string") return input ?? {};
  try {
    return input === "" ? {} : JSON.parse(input);
  } catch {
    throw new AiSdkReplyError(
      `The model called tool "${toolName}" with input that is not JSON: ${input.slice(0, 200)}`,
    );
  }
}
