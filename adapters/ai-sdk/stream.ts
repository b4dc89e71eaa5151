// A doStream result consumed: each delta handed to the step's sink as it arrives (never journaled), the
// parts assembled into the same reply a doGenerate would give.
import { DELTA_TYPES, type ModelDelta } from "../../actors/agents/deltas.js";
import type { ReplyPart } from "../../machines/helpers/messages.js";
import { isObject } from "../../stores/shapes.js";
import { metadataOf, stringField, toolCallOf, type ReplyParts } from "./reply.js";
import type { AiSdkPart } from "./types.js";

/** Reads the stream to its end; an `error` part rejects with the provider's error. */
export async function consumeStream(
  stream: ReadableStream<AiSdkPart>,
  emit: ((delta: ModelDelta) => void) | undefined,
  signal: AbortSignal,
): Promise<ReplyParts> {
  const parts: ReplyParts = { text: "", reasoning: "", toolCalls: [], parts: [] };
  const toolNames = new Map<string, string>();
  // The open text and reasoning parts by the stream's part id; metadata: the latest a chunk gave, as streamText keeps it.
  const open = new Map<string, ReplyPart>();
  const openPart = (type: "text" | "reasoning", part: AiSdkPart) => {
    const id = `${type}:${stringField(part, "id")}`;
    let reply = open.get(id);
    if (!reply) {
      reply = { type, text: "" };
      open.set(id, reply);
      parts.parts.push(reply);
    }
    const { providerMetadata } = metadataOf(part);
    if (providerMetadata) reply.providerMetadata = providerMetadata;
    return { reply, close: () => open.delete(id) };
  };
  const reader = stream.getReader();
  const onAbort = () => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      if (signal.aborted) throw signal.reason;
      switch (part.type) {
        case "text-start":
        case "reasoning-start":
          openPart(part.type === "text-start" ? "text" : "reasoning", part);
          break;
        case "text-end":
        case "reasoning-end":
          openPart(part.type === "text-end" ? "text" : "reasoning", part).close();
          break;
        case "text-delta": {
          const delta = deltaOf(part);
          parts.text += delta;
          openPart("text", part).reply.text += delta;
          if (delta) emit?.({ type: DELTA_TYPES.textDelta, delta });
          break;
        }
        case "reasoning-delta": {
          const delta = deltaOf(part);
          parts.reasoning += delta;
          openPart("reasoning", part).reply.text += delta;
          if (delta) emit?.({ type: DELTA_TYPES.reasoningDelta, delta });
          break;
        }
        case "tool-input-start": {
          const id = stringField(part, "id");
          const toolName = stringField(part, "toolName");
          toolNames.set(id, toolName);
          emit?.({ type: DELTA_TYPES.toolInputStart, id, toolName });
          break;
        }
        case "tool-input-delta": {
          const id = stringField(part, "id");
          emit?.({ type: DELTA_TYPES.toolInputDelta, id, toolName: toolNames.get(id) ?? "", delta: deltaOf(part) });
          break;
        }
        case "tool-call": {
          const call = toolCallOf(part);
          if (!call) break;
          parts.toolCalls.push(call);
          parts.parts.push({ type: "tool-call", ...(call.id ? { toolCallId: call.id } : {}), ...metadataOf(part) });
          emit?.({
            type: DELTA_TYPES.toolCall,
            ...(call.id ? { id: call.id } : {}),
            toolName: call.toolName,
            input: call.input,
          });
          break;
        }
        case "response-metadata":
          parts.response = { ...(isObject(parts.response) ? parts.response : {}), ...part };
          break;
        case "finish":
          parts.finishReason = Reflect.get(part, "finishReason");
          parts.usage = Reflect.get(part, "usage");
          parts.providerMetadata = Reflect.get(part, "providerMetadata");
          break;
        case "error":
          throw Reflect.get(part, "error");
        default:
          break;
      }
    }
    if (signal.aborted) throw signal.reason;
    return parts;
  } finally {
    signal.removeEventListener("abort", onAbort);
    reader.releaseLock();
  }
}

// v2 spells a text delta `delta` (its betas `textDelta`); every supported version `delta`.
function deltaOf(part: AiSdkPart): string {
  return stringField(part, "delta");
}
