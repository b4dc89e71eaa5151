// An execution's stream parts as the AI SDK UI message stream protocol (ai 5 and later; checked against ai 7's
// `uiMessageChunkSchema` and `readUIMessageStream`): one assistant message, a step per model step, text and
// reasoning blocks, tool parts through their states (input, approval, output, error, denied). One stream is one
// response: it ends at the execution's end, or where the agent loop parks for a human, as streamText's stream
// ends when a call needs approval; the response to the answers continues the same message (`originalMessages`).
import { isTainted, taintOrigins } from "../../machines/helpers/taint.js";
import { shown } from "../../stores/shapes.js";
import { ConfigError } from "../errors.js";
import type { StreamPart } from "./deltas.js";

/** The finish reasons this stream gives (the AI SDK's `FinishReason`). */
export type UIMessageFinishReason = "stop" | "tool-calls" | "error";

/** Where a tool output's taint origins go: `providerMetadata.loomwork.taintedFrom` (the UI part's `resultProviderMetadata`). */
// A type, not an interface: the AI SDK's ProviderMetadata is an index signature, which only a type alias meets.
export type LoomworkProviderMetadata = { loomwork: { taintedFrom: string[] } };

/** A chunk of the AI SDK UI message stream protocol (ai 5 and later), as loomwork emits them. */
export type UIMessageChunk =
  | { type: "start"; messageId?: string }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "reset-step" }
  | { type: "text-start" | "text-end" | "reasoning-start" | "reasoning-end"; id: string }
  | { type: "text-delta" | "reasoning-delta"; id: string; delta: string }
  | { type: "tool-input-start"; toolCallId: string; toolName: string }
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string }
  | { type: "tool-approval-response"; approvalId: string; approved: boolean; reason?: string }
  | {
      type: "tool-output-available";
      toolCallId: string;
      output: unknown;
      providerMetadata?: LoomworkProviderMetadata;
      /** A sub-agent's work so far (its UI message), replaced by the next output: the AI SDK's preliminary tool result. */
      preliminary?: boolean;
    }
  | { type: "tool-output-error"; toolCallId: string; errorText: string; providerMetadata?: LoomworkProviderMetadata }
  | { type: "tool-output-denied"; toolCallId: string }
  | { type: "error"; errorText: string }
  | { type: "abort"; reason?: string }
  | { type: "finish"; finishReason?: UIMessageFinishReason };

/** A UI message as far as loomwork reads one (the AI SDK's `UIMessage` is one): an id, a role, parts. */
export interface UIMessageLike {
  /** The message's id: a continued message keeps it. */
  id: string;
  /** `user`, `assistant` or `system`. */
  role: string;
  /** Its parts: a tool part `approval-responded` holds an answer to an approval. */
  parts: readonly unknown[];
}

/** Options of `app.stream(id).toUIMessageStream(options)`, named as the AI SDK's `toUIMessageStream` names them. */
export interface UIMessageStreamOptions {
  /**
   * The messages of the request this stream answers (what `useChat` posts). When the last one is an assistant
   * message whose tool parts hold answered approvals (`approval-responded`, as `addToolApprovalResponse` leaves
   * them), the stream continues that message: its `start` names the message's id and it sends only what came
   * after the park those approvals were asked at. Send the answers first (`convertToToolApprovalEvents`).
   */
  originalMessages?: readonly UIMessageLike[];
  /**
   * The `errorText` of the `error` chunk sent when the execution ends in error (its error's message is the
   * argument's `message`). Tool errors are not passed here: their text is what the model read.
   * @defaultValue () => "An error occurred." (the AI SDK's default: a server's error messages stay on the server)
   */
  onError?: (error: Error) => string;
}

const MASKED = "An error occurred.";

/** Refuses options that are not UIMessageStreamOptions with ConfigError naming the option: they often come from a request's body. */
export function checkUIMessageStreamOptions(options: unknown): asserts options is UIMessageStreamOptions {
  if (typeof options !== "object" || options === null)
    throw new ConfigError(
      "toUIMessageStream.options",
      `an object { originalMessages?, onError? }; got ${shown(options)}.`,
    );
  const given: { originalMessages?: unknown; onError?: unknown } = options;
  const { originalMessages, onError } = given;
  // A message that is not { id, role, parts } is read as none: only the last assistant message's parts are read.
  if (originalMessages !== undefined && !Array.isArray(originalMessages))
    throw new ConfigError(
      "toUIMessageStream.originalMessages",
      `an array of UI messages; got ${shown(originalMessages)}.`,
    );
  if (onError !== undefined && typeof onError !== "function")
    throw new ConfigError("toUIMessageStream.onError", `a function (error) => string; got ${shown(onError)}.`);
}

/**
 * Converts an iterable of stream parts into a UI message stream; cancelling it ends the iteration.
 * `buffered` says how many parts the iteration holds now: the stream ends at a park only once it has read them all.
 */
export function toUIMessageStream(
  parts: AsyncIterable<StreamPart>,
  options: UIMessageStreamOptions,
  buffered: () => number,
): ReadableStream<UIMessageChunk> {
  const iterator = parts[Symbol.asyncIterator]();
  const onError = options.onError ?? (() => MASKED);
  const continued = continuationOf(options.originalMessages);
  const open = new Map<string, string>(); // block kind -> id, within the current step
  const started = new Set<string>(); // tool calls whose input started
  // The current turn's tool calls: asked for approval (and not yet answered), with an outcome.
  const turn = {
    calls: new Set<string>(),
    asked: new Set<string>(),
    answered: new Set<string>(),
    done: new Set<string>(),
  };
  const everAsked = new Set<string>();
  // Continuing a message: nothing is sent until the park its approvals were asked at.
  let sending = continued.approvals.size === 0;
  let step = "";
  let stepDone = false; // the model step's finish-step was read: the loop parks only after it
  let ending: UIMessageFinishReason | undefined;
  // Each sub-agent called by the streamed execution (agentTool), by the call it answers: its work as a UI message.
  const nested = new Map<string, SubAgentMessage>();
  const calls = new Set<string>(); // the streamed execution's tool calls whose input was sent
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      controller.enqueue({
        type: "start",
        ...(continued.messageId === undefined ? {} : { messageId: continued.messageId }),
      });
    },
    async pull(controller) {
      for (;;) {
        const { done, value: part } = await iterator.next();
        if (done) {
          controller.enqueue({ type: "finish", ...(ending ? { finishReason: ending } : {}) });
          controller.close();
          return;
        }
        const chunks = part.executionId === undefined ? chunksOf(part) : subAgentChunks(part);
        const wasSending = sending;
        if (sending) for (const chunk of chunks) controller.enqueue(chunk);
        // The park the message's answers were asked at: what follows continues the message.
        else if (parked() && [...continued.approvals].every((id) => everAsked.has(id))) sending = true;
        // Parked for a human, with nothing more to read: this response ends here, as streamText's does (and a
        // continuation that reached no park its message answers ends too, rather than wait for the run's end).
        if (parked() && part.index + 1 >= buffered()) {
          controller.enqueue({ type: "finish", finishReason: "tool-calls" });
          controller.close();
          await iterator.return?.();
          return;
        }
        if (wasSending && chunks.length > 0) return;
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });

  // The model step has ended, every call of its turn has its outcome or waits for a human, and one does.
  function parked(): boolean {
    if (!stepDone) return false;
    const waiting = (id: string) => turn.asked.has(id) && !turn.answered.has(id) && !turn.done.has(id);
    let any = false;
    for (const id of turn.calls) {
      if (waiting(id)) any = true;
      else if (!turn.done.has(id)) return false;
    }
    return any;
  }

  function newTurn(): void {
    for (const set of Object.values(turn)) set.clear();
  }

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

  // A sub-agent's part (the tree's stream, actors/agents/streams.ts): its call's output grows, as the AI SDK's
  // subagent tools yield it (preliminary). A sub-agent of a sub-agent shows in its own parent's message, not here.
  function subAgentChunks(part: StreamPart): UIMessageChunk[] {
    const toolCallId = part.parentToolCallId;
    if (toolCallId === undefined || !calls.has(toolCallId) || turn.done.has(toolCallId)) return [];
    let message = nested.get(toolCallId);
    if (!message) nested.set(toolCallId, (message = new SubAgentMessage(`${toolCallId}:${part.executionId}`)));
    if (!message.apply(part)) return [];
    return [{ type: "tool-output-available", toolCallId, output: message.snapshot(), preliminary: true }];
  }

  function chunksOf(part: StreamPart): UIMessageChunk[] {
    const toolCallId = part.id ?? "";
    switch (part.type) {
      case "start-step":
        step = part.stepId;
        stepDone = false;
        newTurn();
        return [{ type: "start-step" }];
      case "finish-step":
        stepDone = true;
        return [...closeBlocks(), { type: "finish-step" }];
      case "retry":
        // The attempt's parts are void (the protocol's reset-step removes the step's parts); the next attempt
        // sends its own. Its open blocks end first: the parser refuses an end for a part it no longer has.
        started.clear();
        newTurn();
        return [...closeBlocks(), { type: "reset-step" }];
      case "text-delta":
        return block("text", part.delta ?? "");
      case "reasoning-delta":
        return block("reasoning", part.delta ?? "");
      case "tool-input-start":
        started.add(toolCallId);
        return [{ type: "tool-input-start", toolCallId, toolName: part.toolName ?? "" }];
      case "tool-input-delta":
        return started.has(toolCallId)
          ? [{ type: "tool-input-delta", toolCallId, inputTextDelta: part.delta ?? "" }]
          : [];
      case "tool-call":
        turn.calls.add(toolCallId);
        calls.add(toolCallId);
        return [{ type: "tool-input-available", toolCallId, toolName: part.toolName ?? "", input: part.input ?? {} }];
      case "tool-approval-request":
        turn.asked.add(toolCallId);
        everAsked.add(toolCallId);
        // The call's id is the approval's: what useChat answers names the call a TOOL_APPROVAL decides.
        return [{ type: "tool-approval-request", approvalId: toolCallId, toolCallId }];
      case "tool-approval-response":
        turn.answered.add(toolCallId);
        return [
          {
            type: "tool-approval-response",
            approvalId: toolCallId,
            approved: part.approved === true,
            ...(part.reason === undefined ? {} : { reason: part.reason }),
          },
        ];
      case "tool-output-denied":
        turn.done.add(toolCallId);
        return [{ type: "tool-output-denied", toolCallId }];
      case "tool-result": {
        if (!part.id) return [];
        turn.done.add(toolCallId);
        const output = toolOutput(toolCallId, part.output, part.isError === true);
        // A sub-agent's call: its final output is its whole message, as the last value a subagent tool yields.
        const message = nested.get(toolCallId);
        nested.delete(toolCallId);
        return [
          message && output.type === "tool-output-available" ? { ...output, output: message.snapshot() } : output,
        ];
      }
      case "error":
        ending = "error";
        return [...closeBlocks(), { type: "error", errorText: onError(new Error(part.error ?? "")) }];
      case "abort":
        return [...closeBlocks(), { type: "abort", ...(part.reason ? { reason: part.reason } : {}) }];
      default:
        return [];
    }
  }
}

// A tool's journaled result as the UI shows it: the value, every taint marker in it replaced by what it marks,
// and the origins in the part's result provider metadata; an error result's text is what the model read.
function toolOutput(toolCallId: string, output: unknown, isError: boolean): UIMessageChunk {
  const origins = taintOrigins(output);
  const metadata = origins.length > 0 ? { providerMetadata: { loomwork: { taintedFrom: origins } } } : {};
  const value = untainted(output ?? null);
  if (!isError) return { type: "tool-output-available", toolCallId, output: value, ...metadata };
  const error = typeof value === "object" && value !== null && "error" in value ? value.error : value;
  return {
    type: "tool-output-error",
    toolCallId,
    errorText: typeof error === "string" ? error : (JSON.stringify(error) ?? String(error)),
    ...metadata,
  };
}

/** `value` with every taint marker (`{ __loomTainted, value }`) replaced by the value it marks. */
export function untainted(value: unknown): unknown {
  if (isTainted(value)) return untainted(value.value);
  if (Array.isArray(value)) return value.map(untainted);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, untainted(inner)]));
}

// What a request's messages say about the response: the assistant message it continues, and the calls whose
// approvals that message answers (the parts useChat's addToolApprovalResponse left `approval-responded`).
function continuationOf(messages: readonly UIMessageLike[] | undefined): {
  messageId?: string;
  approvals: Set<string>;
} {
  const last: Partial<UIMessageLike> | undefined = messages?.at(-1);
  const approvals = new Set<string>();
  if (last?.role !== "assistant" || typeof last.id !== "string" || !Array.isArray(last.parts)) return { approvals };
  for (const part of last.parts) {
    if (typeof part !== "object" || part === null) continue;
    if ("state" in part && part.state === "approval-responded" && "toolCallId" in part)
      approvals.add(String(part.toolCallId));
  }
  return { messageId: last.id, approvals };
}

type SubAgentPart = { type: string; [field: string]: unknown };

// The state a sub-agent's tool part takes at each of its stream's parts.
const TOOL_STATES: Record<string, string> = {
  "tool-input-start": "input-streaming",
  "tool-call": "input-available",
  "tool-approval-request": "approval-requested",
  "tool-approval-response": "approval-responded",
  "tool-output-denied": "output-denied",
  "tool-result": "output-available",
};

// A sub-agent's work as a UI message (what the AI SDK's readUIMessageStream builds of an agent's stream): a
// step-start per model step, text and reasoning parts, a tool part per call through its states.
class SubAgentMessage {
  private readonly parts: SubAgentPart[] = [];
  private readonly tools = new Map<string, SubAgentPart>();
  private readonly open = new Map<string, SubAgentPart>(); // text, reasoning: the step's block

  constructor(private readonly id: string) {}

  snapshot(): { id: string; role: "assistant"; parts: SubAgentPart[] } {
    return { id: this.id, role: "assistant", parts: structuredClone(this.parts) };
  }

  /** Applies one of the sub-agent's parts; false when it changes nothing the message shows. */
  apply(part: StreamPart): boolean {
    const { type } = part;
    if (type === "start-step" || type === "finish-step" || type === "retry") {
      for (const block of this.open.values()) block.state = "done";
      const closed = this.open.size > 0;
      this.open.clear();
      // A retry's attempt is void: back to its step's start.
      if (type === "retry") this.parts.splice(this.parts.map((p) => p.type).lastIndexOf("step-start") + 1);
      if (type === "start-step") this.parts.push({ type: "step-start" });
      return type !== "finish-step" || closed;
    }
    if (type === "text-delta" || type === "reasoning-delta") {
      const kind = type.slice(0, -"-delta".length);
      let block = this.open.get(kind);
      if (!block) {
        block = { type: kind, text: "", state: "streaming" };
        this.parts.push(block);
        this.open.set(kind, block);
      }
      block.text = `${String(block.text)}${part.delta ?? ""}`;
      return true;
    }
    const state = TOOL_STATES[type];
    if (state === undefined || !part.id) return false;
    let tool = this.tools.get(part.id);
    if (!tool) {
      tool = { type: `tool-${part.toolName ?? "unknown"}`, toolCallId: part.id };
      this.tools.set(part.id, tool);
      this.parts.push(tool);
    }
    tool.state = state;
    if (type === "tool-call") tool.input = part.input ?? {};
    if (type === "tool-approval-request" || type === "tool-approval-response")
      tool.approval = {
        id: part.id,
        ...(type === "tool-approval-response" ? { approved: part.approved === true } : {}),
        ...(part.reason ? { reason: part.reason } : {}),
      };
    if (type === "tool-result") {
      const chunk = toolOutput(part.id, part.output, part.isError === true);
      if (chunk.type === "tool-output-available") tool.output = chunk.output;
      else if (chunk.type === "tool-output-error")
        Object.assign(tool, { state: "output-error", errorText: chunk.errorText });
    }
    return true;
  }
}
