// The conversation types shared by machines, providers and effects. Pure data, JSON-safe.

/** A tool call the model asked for, with the id the loop gave it. */
export interface ToolCall {
  id: string;
  toolName: string;
  input: unknown;
}

/** One message of a transcript, as the loop keeps it and providers receive it. */
export interface Message {
  role: "system" | "user" | "assistant" | "tool";
  content: unknown;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  toolName?: string;
}

/** What a model provider receives: the (fenced) transcript, the tools and a token cap. */
export interface ModelRequest {
  messages: Message[];
  tools: { name: string; description?: string }[];
  maxTokens?: number;
}

/** Token usage of one model call. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** What a model provider returns: text, tool calls and usage. */
export interface ModelReply {
  text?: string;
  toolCalls?: { toolName: string; input: unknown }[];
  usage?: Usage;
}
