// What the UI message stream suites share: one scripted model output, fed to loomwork (through fromAiSdk)
// and to ai 7's streamText alike (ai 7's MockLanguageModelV4), and the reading of a UI message stream with
// ai 7's own parser (readUIMessageStream) and chunk schema (uiMessageChunkSchema).
import { readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from "ai-v7";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai-v7/test";

/** One model call's output: reasoning, text, tool calls; `failAfterText` makes the call fail mid-stream (retryable) after that much text. */
export interface Turn {
  reasoning?: string;
  text?: string;
  toolCalls?: { id: string; name: string; input: unknown }[];
  failAfterText?: string;
  /** Stream each call's input as it is written (`tool-input-start`, `-delta`, `-end`) before the call. */
  streamInput?: boolean;
}

const USAGE = {
  inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 2, text: 2, reasoning: 0 },
};

/** A retryable provider error, as an AI SDK APICallError reports a reset connection. */
export function retryableError(): Error {
  return Object.assign(new Error("connection reset by the provider"), { isRetryable: true });
}

/** The LanguageModelV4 stream parts of one turn. */
export function streamPartsOf(turn: Turn): unknown[] {
  const parts: unknown[] = [{ type: "stream-start", warnings: [] }];
  if (turn.failAfterText !== undefined) {
    parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: turn.failAfterText });
    parts.push({ type: "error", error: retryableError() });
    return parts;
  }
  if (turn.reasoning) {
    parts.push({ type: "reasoning-start", id: "r" });
    parts.push({ type: "reasoning-delta", id: "r", delta: turn.reasoning });
    parts.push({ type: "reasoning-end", id: "r" });
  }
  if (turn.text) {
    parts.push({ type: "text-start", id: "t" });
    // Two pieces, so the stream has more than one delta.
    const half = Math.ceil(turn.text.length / 2);
    parts.push({ type: "text-delta", id: "t", delta: turn.text.slice(0, half) });
    parts.push({ type: "text-delta", id: "t", delta: turn.text.slice(half) });
    parts.push({ type: "text-end", id: "t" });
  }
  for (const call of turn.toolCalls ?? []) {
    const input = JSON.stringify(call.input);
    if (turn.streamInput) {
      parts.push({ type: "tool-input-start", id: call.id, toolName: call.name });
      for (const piece of [input.slice(0, 5), input.slice(5)])
        parts.push({ type: "tool-input-delta", id: call.id, delta: piece });
      parts.push({ type: "tool-input-end", id: call.id });
    }
    parts.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input });
  }
  const unified = turn.toolCalls?.length ? "tool-calls" : "stop";
  parts.push({ type: "finish", finishReason: { unified, raw: unified }, usage: USAGE });
  return parts;
}

/** A MockLanguageModelV4 that streams `turns` in order, one a call. */
export function mockModel(turns: Turn[]): MockLanguageModelV4 {
  let call = 0;
  return new MockLanguageModelV4({
    doStream: async () => {
      const turn = turns[call++];
      if (!turn) throw new Error(`the script has ${turns.length} turns; call ${call} asked for another`);
      return { stream: convertArrayToReadableStream(streamPartsOf(turn)) } as never;
    },
  });
}

/** Tees `stream`: the chunks as they pass, and the final message ai 7's readUIMessageStream builds. */
export async function readMessage(
  stream: ReadableStream<unknown>,
  message?: UIMessage,
): Promise<{ message: UIMessage; chunks: UIMessageChunk[]; errors: unknown[] }> {
  const chunks: UIMessageChunk[] = [];
  const errors: unknown[] = [];
  const seen = (stream as ReadableStream<UIMessageChunk>).pipeThrough(
    new TransformStream<UIMessageChunk, UIMessageChunk>({
      transform(chunk, out) {
        chunks.push(chunk);
        out.enqueue(chunk);
      },
    }),
  );
  let last: UIMessage | undefined;
  for await (const m of readUIMessageStream({
    stream: seen,
    ...(message ? { message: structuredClone(message) } : {}),
    onError: (e) => errors.push(e),
  }))
    last = m;
  return { message: structuredClone(last ?? message ?? { id: "", role: "assistant", parts: [] }), chunks, errors };
}

/** The chunks ai 7's own schema refuses, with its reason. */
export async function invalidChunks(chunks: readonly unknown[]): Promise<{ chunk: unknown; issue: string }[]> {
  const schema = uiMessageChunkSchema();
  const refused: { chunk: unknown; issue: string }[] = [];
  for (const chunk of chunks) {
    const result = await schema.validate!(chunk);
    if (!result.success) refused.push({ chunk, issue: String(result.error) });
  }
  return refused;
}

/** What useChat's addToolApprovalResponse does to the message: the part asking `approvalId` is answered. */
export function respond(message: UIMessage, approvalId: string, approved: boolean, reason?: string): UIMessage {
  return {
    ...message,
    parts: message.parts.map((part) =>
      "approval" in part && part.state === "approval-requested" && part.approval.id === approvalId
        ? ({
            ...part,
            state: "approval-responded",
            approval: { ...part.approval, id: approvalId, approved, reason },
          } as unknown as typeof part)
        : part,
    ),
  };
}
