// A ChatTransport for the AI SDK's `useChat` (and its `Chat` class) over an app in the same process (a tab on
// IndexedDB, an Electron renderer, a Node service): a chat request starts an agent, or sends the approvals its
// messages answer, and reads back the execution's UI message stream. No route, no server; structurally the
// AI SDK's `ChatTransport` (loomwork does not depend on `ai`).
import type { AnyStateMachine } from "xstate";
import type { Message } from "../../machines/helpers/messages.js";
import type { App } from "../app.js";
import { ConfigError } from "../errors.js";
import { convertToToolApprovalEvents } from "./uiApprovals.js";
import type { UIMessageChunk, UIMessageLike } from "./uiMessageStream.js";

/** Options of `new AgentChatTransport(options)`. */
export interface AgentChatTransportOptions {
  /** The app that runs the agent. */
  app: App;
  /** The agent a chat's user message starts: an `agentLoop$(...)` machine (or any machine with the same input). */
  agent: AnyStateMachine;
  /**
   * The execution a request starts or continues. One execution answers one user message: the request that
   * answers its approvals must name the same one.
   * @defaultValue (chatId, messages) => `${chatId}-${the number of user messages}`
   */
  executionIdOf?: (chatId: string, messages: readonly UIMessageLike[]) => string;
  /**
   * The agent's input for a user message.
   * @defaultValue { messages: each message's role and the text of its text parts }
   */
  inputOf?: (messages: readonly UIMessageLike[]) => unknown;
  /** The execution's subject (whose personal data it holds), if any: `app.start`'s `subject`. */
  subjectOf?: (chatId: string) => string | undefined;
}

/** What `useChat` hands `sendMessages` (the AI SDK's ChatTransport), as far as this transport reads it. */
export interface AgentChatRequest {
  /** `submit-message` (a user message, or the answers to approvals); `regenerate-message` is refused. */
  trigger: "submit-message" | "regenerate-message";
  /** The chat's id (`useChat({ id })`): with the messages, names the execution (`executionIdOf`). */
  chatId: string;
  /** The message to regenerate or continue, if any (not read). */
  messageId: string | undefined;
  /** The chat's messages: the last user message starts the agent; an assistant message's answers decide its calls. */
  messages: UIMessageLike[];
  /** Aborted by `stop()`: ends the response (the execution runs on). */
  abortSignal: AbortSignal | undefined;
}

/**
 * The AI SDK's `ChatTransport` over an app in the same process: `useChat({ transport: new
 * AgentChatTransport({ app, agent }) })`. A user message starts an execution of `agent`; answers to its
 * approvals (`addToolApprovalResponse`) are sent to it as TOOL_APPROVAL events (`convertToToolApprovalEvents`,
 * checked) and its UI message stream continues the same message. Stopping (`stop()`) ends the response, not
 * the execution (`app.stop(id)` does). `regenerate()` is refused: a journaled answer is not asked again.
 *
 * @example
 * const { messages, sendMessage, addToolApprovalResponse } = useChat({
 *   transport: new AgentChatTransport({ app, agent }),
 *   sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
 * });
 */
export class AgentChatTransport {
  private readonly options: AgentChatTransportOptions;

  constructor(options: AgentChatTransportOptions) {
    if (typeof options !== "object" || options === null || typeof options.app?.stream !== "function")
      throw new ConfigError(
        "AgentChatTransport.app",
        "the app that runs the agent: new AgentChatTransport({ app, agent }).",
      );
    if (typeof options.agent !== "object" || options.agent === null)
      throw new ConfigError("AgentChatTransport.agent", "the agent a user message starts: agentLoop$({ ... }).");
    this.options = options;
  }

  /** Starts the agent for a user message, or sends the approvals the messages answer; resolves with the UI stream. */
  async sendMessages(request: AgentChatRequest): Promise<ReadableStream<UIMessageChunk>> {
    const { app, agent } = this.options;
    const { chatId, messages, abortSignal } = request;
    if (request.trigger === "regenerate-message")
      throw new ConfigError(
        "AgentChatTransport.regenerate",
        "a journaled answer is not asked again; send a new message (it starts a new execution).",
      );
    const executionId = (this.options.executionIdOf ?? defaultExecutionId)(chatId, messages);
    const approvals = convertToToolApprovalEvents(messages);
    if (approvals.length > 0) {
      const actor = await app.resume(executionId);
      for (const event of approvals) await actor.sendAsync(event);
    } else {
      const subject = this.options.subjectOf?.(chatId);
      await app.start(agent, {
        executionId,
        input: (this.options.inputOf ?? defaultInput)(messages),
        ...(subject === undefined ? {} : { subject }),
      });
    }
    return app
      .stream(executionId, abortSignal ? { signal: abortSignal } : {})
      .toUIMessageStream({ originalMessages: messages });
  }

  /** Reconnecting is not offered: a reloaded page resumes its executions (`app.resumeUnfinished()`) and reads `app.stream`. */
  async reconnectToStream(): Promise<null> {
    return null;
  }
}

function defaultExecutionId(chatId: string, messages: readonly UIMessageLike[]): string {
  return `${chatId}-${messages.filter((m) => m.role === "user").length}`;
}

function defaultInput(messages: readonly UIMessageLike[]): { messages: Message[] } {
  return {
    messages: messages.map((m) => ({
      role: m.role === "assistant" || m.role === "system" ? m.role : "user",
      content: m.parts
        .map((p) =>
          typeof p === "object" && p !== null && "type" in p && p.type === "text" && "text" in p ? p.text : "",
        )
        .join(""),
    })),
  };
}
