// The conversation types shared by machines, providers and effects. Pure data, JSON-safe.

export interface ToolCall {
  id: string;
  toolName: string;
  input: unknown;
}

export interface Message {
  role: "system" | "user" | "assistant" | "tool";
  content: unknown;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  toolName?: string;
}

export interface ModelRequest {
  messages: Message[];
  tools: { name: string; description?: string }[];
  maxTokens?: number;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface ModelReply {
  text?: string;
  toolCalls?: { toolName: string; input: unknown }[];
  usage?: Usage;
}
