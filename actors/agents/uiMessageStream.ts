// An execution's stream parts as the AI SDK UI message stream protocol (the chunks `useChat` reads through
// a transport): one assistant message, a step per model step, text and reasoning blocks, tool parts.
import type { StreamPart } from "./deltas.js";

/** A chunk of the AI SDK UI message stream protocol (ai 5 and later), as loomwork emits them. */
export type UIMessageChunk =
  | { type: "start"; messageId?: string }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "text-start" | "text-end" | "reasoning-start" | "reasoning-end"; id: string }
  | { type: "text-delta" | "reasoning-delta"; id: string; delta: string }
  | { type: "tool-input-start"; toolCallId: string; toolName: string }
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown }
  | { type: "tool-output-available"; toolCallId: string; output: unknown }
  | { type: "tool-output-error"; toolCallId: string; errorText: string }
  | { type: "finish" };

/** Converts an iterable of stream parts into a UI message stream; cancelling it ends the iteration. */
export function toUIMessageStream(parts: AsyncIterable<StreamPart>): ReadableStream<UIMessageChunk> {
  const iterator = parts[Symbol.asyncIterator]();
  const open = new Map<string, string>(); // block kind -> id, within the current step
  const started = new Set<string>(); // tool calls whose input started
  let step = "";
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      controller.enqueue({ type: "start" });
    },
    async pull(controller) {
      const { done, value: part } = await iterator.next();
      if (done) {
        controller.enqueue({ type: "finish" });
        controller.close();
        return;
      }
      for (const chunk of chunksOf(part)) controller.enqueue(chunk);
    },
    async cancel() {
      await iterator.return?.();
    },
  });

  function closeBlocks(): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    for (const [kind, id] of open) out.push({ type: kind === "text" ? "text-end" : "reasoning-end", id });
    open.clear();
    return out;
  }

  function block(kind: "text" | "reasoning", delta: string): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    let id = open.get(kind);
    if (!id) {
      id = `${step}:${kind}`;
      open.set(kind, id);
      out.push({ type: kind === "text" ? "text-start" : "reasoning-start", id });
    }
    out.push({ type: kind === "text" ? "text-delta" : "reasoning-delta", id, delta });
    return out;
  }

  function chunksOf(part: StreamPart): UIMessageChunk[] {
    switch (part.type) {
      case "start-step":
        step = part.stepId;
        return [{ type: "start-step" }];
      case "finish-step":
        return [...closeBlocks(), { type: "finish-step" }];
      case "retry":
        // The attempt's blocks are void; the next attempt opens its own.
        return closeBlocks();
      case "text-delta":
        return block("text", part.delta ?? "");
      case "reasoning-delta":
        return block("reasoning", part.delta ?? "");
      case "tool-input-start":
        started.add(part.id ?? "");
        return [{ type: "tool-input-start", toolCallId: part.id ?? "", toolName: part.toolName ?? "" }];
      case "tool-input-delta":
        return started.has(part.id ?? "")
          ? [{ type: "tool-input-delta", toolCallId: part.id ?? "", inputTextDelta: part.delta ?? "" }]
          : [];
      case "tool-call":
        return [
          {
            type: "tool-input-available",
            toolCallId: part.id ?? "",
            toolName: part.toolName ?? "",
            input: part.input ?? {},
          },
        ];
      case "tool-result": {
        if (!part.id) return [];
        if (!part.isError) return [{ type: "tool-output-available", toolCallId: part.id, output: part.output ?? null }];
        const error =
          typeof part.output === "object" && part.output !== null && "error" in part.output
            ? part.output.error
            : part.output;
        return [{ type: "tool-output-error", toolCallId: part.id, errorText: String(error) }];
      }
      default:
        return [];
    }
  }
}
