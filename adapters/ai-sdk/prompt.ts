// A ModelRequest as AI SDK call options: the transcript as a prompt, the tools with their JSON Schemas, and
// the call options passed through. The same shapes serve v2, v3 and v4.
import type { Message, ModelCallOptions, ModelRequest, ToolCall, ToolChoice } from "../../machines/helpers/messages.js";
import { contentText } from "../../machines/helpers/taint.js";
import { isErrorResult } from "../../machines/helpers/transcript.js";
import type {
  AiSdkCallOptions,
  AiSdkJsonValue,
  AiSdkPromptMessage,
  AiSdkTextPart,
  AiSdkToolResultOutput,
} from "./types.js";

/** The JSON Schema a tool without one is declared with: an object, anything in it. */
export const ANY_OBJECT_SCHEMA = { type: "object" } as const;

/** The AI SDK call options for one request: the adapter's defaults, overridden by the request's. */
export function callOptionsOf(
  request: ModelRequest,
  defaults: ModelCallOptions,
  signal: AbortSignal,
): AiSdkCallOptions {
  const options = { ...defaults, ...request.options };
  const { toolChoice, providerOptions: _given, ...rest } = options;
  const providerOptions = options.providerOptions ? providerOptionsOf(options.providerOptions) : undefined;
  return {
    ...rest,
    prompt: request.messages.map(toPrompt),
    ...(request.maxTokens === undefined ? {} : { maxOutputTokens: request.maxTokens }),
    ...(request.tools.length
      ? {
          tools: request.tools.map((t) => ({
            type: "function" as const,
            name: t.name,
            ...(t.description ? { description: t.description } : {}),
            inputSchema: t.inputSchema ?? ANY_OBJECT_SCHEMA,
          })),
        }
      : {}),
    ...(toolChoice === undefined ? {} : { toolChoice: toolChoiceOf(toolChoice) }),
    ...(providerOptions ? { providerOptions } : {}),
    abortSignal: signal,
  };
}

function toolChoiceOf(choice: ToolChoice): NonNullable<AiSdkCallOptions["toolChoice"]> {
  return typeof choice === "string" ? { type: choice } : choice;
}

function toPrompt(message: Message): AiSdkPromptMessage {
  const text = contentText(message.content);
  switch (message.role) {
    case "system":
      return { role: "system", content: text };
    case "user":
      return { role: "user", content: [{ type: "text", text }] };
    case "assistant":
      return { role: "assistant", content: message.parts ? partsOf(message, text) : plainPartsOf(message, text) };
    case "tool":
      return {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: message.toolCallId ?? "",
            toolName: message.toolName ?? "",
            output: toolOutputOf(message),
          },
        ],
      };
  }
}

type AssistantPart = Extract<AiSdkPromptMessage, { role: "assistant" }>["content"][number];

function toolCallPart(call: ToolCall, providerMetadata?: Record<string, unknown>): AssistantPart {
  return {
    type: "tool-call",
    toolCallId: call.id,
    toolName: call.toolName,
    input: call.input,
    ...(providerMetadata ? { providerOptions: providerOptionsOf(providerMetadata) } : {}),
  };
}

function plainPartsOf(message: Message, text: string): AssistantPart[] {
  return [...(text ? [{ type: "text" as const, text }] : []), ...(message.toolCalls ?? []).map((c) => toolCallPart(c))];
}

// The reply's parts in their order, each with the provider's metadata as its providerOptions (as streamText
// builds the next step's assistant message): reasoning items and item ids go back to the provider. A call
// the parts do not name, and text when no part is text, are sent as without parts.
function partsOf(message: Message, text: string): AssistantPart[] {
  const calls = new Map((message.toolCalls ?? []).map((c) => [c.id, c]));
  const out: AssistantPart[] = [];
  let textSent = false;
  for (const part of message.parts ?? []) {
    const options = part.providerMetadata ? { providerOptions: providerOptionsOf(part.providerMetadata) } : {};
    if (part.type === "reasoning") out.push({ type: "reasoning", text: part.text ?? "", ...options });
    else if (part.type === "text") {
      // A reply's only text part is journaled without its text: it is the message's.
      const partText = part.text ?? (textSent ? "" : text);
      if (partText) out.push({ type: "text", text: partText, ...options });
      textSent = true;
    } else if (part.type === "tool-call" && part.toolCallId !== undefined) {
      const call = calls.get(part.toolCallId);
      if (!call) continue;
      calls.delete(part.toolCallId);
      out.push(toolCallPart(call, part.providerMetadata));
    }
  }
  if (!textSent && text) out.push({ type: "text", text });
  for (const call of calls.values()) out.push(toolCallPart(call));
  return out;
}

// A tool's result as the model reads it: text or JSON, and an error (the tool threw, refused its input, or
// does not exist) as the AI SDK's error forms, so the model knows to correct its call.
function toolOutputOf(message: Message): AiSdkToolResultOutput {
  // The tool's projection (toModelOutput), already fenced where the result was tainted.
  const projected = message.modelOutput;
  if (projected) {
    switch (projected.type) {
      case "text":
      case "error-text":
        return { type: projected.type, value: projected.value };
      case "json":
      case "error-json":
        return { type: projected.type, value: jsonOf(projected.value) };
      case "content":
        // The parts are in the tool's own AI SDK version's forms (media parts differ between versions, so
        // the structural type names only text): passed through as the tool's toModelOutput gave them.
        return { type: "content", value: projected.value.map(jsonRecordOf) as unknown as AiSdkTextPart[] };
    }
  }
  const content = message.content;
  if (isErrorResult(content)) {
    const error = content.error;
    return typeof error === "string"
      ? { type: "error-text", value: error }
      : { type: "error-json", value: jsonOf(error) };
  }
  return typeof content === "string" ? { type: "text", value: content } : { type: "json", value: jsonOf(content) };
}

/** A journaled value is plain JSON already; this narrows it for the AI SDK's JSONValue without a cast. */
export function jsonOf(value: unknown): AiSdkJsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) return value.map(jsonOf);
  if (typeof value === "object") return jsonRecordOf(value);
  return null;
}

function jsonRecordOf(value: object): { [key: string]: AiSdkJsonValue } {
  const out: { [key: string]: AiSdkJsonValue } = {};
  for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = jsonOf(v);
  return out;
}

// Call options by provider, or a part's provider metadata sent back as its options: each provider's object as JSON.
function providerOptionsOf(options: Record<string, unknown>): Record<string, Record<string, AiSdkJsonValue>> {
  const out: Record<string, Record<string, AiSdkJsonValue>> = {};
  for (const [provider, settings] of Object.entries(options))
    if (typeof settings === "object" && settings !== null && !Array.isArray(settings))
      out[provider] = jsonRecordOf(settings);
  return out;
}
