// The conversation types shared by machines, providers and effects. Pure data, JSON-safe.

/** A tool call the model asked for, with the id the loop gave it. */
export interface ToolCall {
  id: string;
  toolName: string;
  input: unknown;
  /** The call waits for a human's TOOL_APPROVAL before it runs (its tool declares `needsApproval`). */
  needsApproval?: boolean;
}

/**
 * What the model reads of a tool's result when the tool projects it (`toModelOutput`): the AI SDK's tool
 * result output forms. `content` holds parts such as `{ type: "text", text }` and
 * `{ type: "image-data", data, mediaType }`, as the AI SDK spells them.
 */
export type ToolModelOutput =
  | { type: "text"; value: string }
  | { type: "json"; value: unknown }
  | { type: "error-text"; value: string }
  | { type: "error-json"; value: unknown }
  | { type: "content"; value: ({ type: string } & Record<string, unknown>)[] };

/** One message of a transcript, as the loop keeps it and providers receive it. */
export interface Message {
  role: "system" | "user" | "assistant" | "tool";
  content: unknown;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  toolName?: string;
  /**
   * An assistant message's parts with what the provider said of each (the reply's `parts`), sent back to the
   * provider on the next turn: OpenAI Responses' reasoning items and item ids, Anthropic's thinking signatures.
   */
  parts?: ReplyPart[];
  /**
   * A tool message's projection for the model, in the AI SDK's forms, when its tool declares
   * `toModelOutput`: set on the model's request only (never journaled), with `content` its plain reading.
   */
  modelOutput?: ToolModelOutput;
}

/** A tool as a model request names it: the runtime adds the registered tool's description and JSON Schema. */
export interface ToolSpec {
  name: string;
  description?: string;
  /** The tool input's JSON Schema, sent to the model. */
  inputSchema?: Record<string, unknown>;
}

/** How the model must choose tools: the AI SDK's forms, or their shorthands. */
export type ToolChoice =
  "auto" | "none" | "required" | { type: "auto" | "none" | "required" } | { type: "tool"; toolName: string };

/**
 * Per-call settings passed to the provider as they are (the AI SDK's call options). None is journaled:
 * they are configuration, like the system prompt.
 */
export interface ModelCallOptions {
  /** Sampling temperature: higher is more random. @defaultValue the provider's */
  temperature?: number;
  /** Nucleus sampling: only tokens within this cumulative probability are considered. @defaultValue the provider's */
  topP?: number;
  /** Only the K most likely tokens are sampled from. @defaultValue the provider's */
  topK?: number;
  /** Penalty on tokens already present in the text, to favour new topics. @defaultValue the provider's */
  presencePenalty?: number;
  /** Penalty on tokens by how often they already occur, to reduce repetition. @defaultValue the provider's */
  frequencyPenalty?: number;
  /** The model stops generating when it produces one of these strings. */
  stopSequences?: string[];
  /** Seed for the provider's sampling, where it supports deterministic output. */
  seed?: number;
  /** Whether and which tools the model must call. @defaultValue the provider's ("auto" in the AI SDK) */
  toolChoice?: ToolChoice;
  /** Provider-specific options, by provider name: `{ openai: { reasoningEffort: "low" } }`. */
  providerOptions?: Record<string, Record<string, unknown>>;
  /** Extra HTTP headers for the provider's request. */
  headers?: Record<string, string | undefined>;
}

/** What a model provider receives: the (fenced) transcript, the tools, a token cap and the call options. */
export interface ModelRequest {
  messages: Message[];
  tools: ToolSpec[];
  maxTokens?: number;
  options?: ModelCallOptions;
}

/** Token usage of one model call. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Of `outputTokens`, the reasoning tokens, when the provider reports them. */
  reasoningTokens?: number;
  /** Of `inputTokens`, the tokens read from the provider's cache, when it reports them. */
  cachedInputTokens?: number;
  /** Model calls the step made, when more than one (the retries of a retryable provider error). */
  attempts?: number;
}

/** A tool call in a model reply: `id` is the provider's tool-call id, kept when it gives one. */
export interface ReplyToolCall {
  id?: string;
  toolName: string;
  input: unknown;
  /** Set by the llm effect when the tool declares `needsApproval` and it holds for this input. */
  needsApproval?: boolean;
}

/** A human's decision on a parked tool call, sent to the agent's actor. */
export interface ToolApprovalEvent {
  type: "TOOL_APPROVAL";
  toolCallId: string;
  approved: boolean;
  /** Why: a denial's reason reaches the model with the denial. */
  reason?: string;
}

/**
 * One part of a model's reply, in the reply's order, with the provider's metadata of it (the AI SDK's
 * `providerMetadata`, sent back as the part's `providerOptions`, as `streamText` does across steps).
 */
export interface ReplyPart {
  type: "reasoning" | "text" | "tool-call";
  /** A reasoning or text part's text; absent on a reply's only text part, whose text is the reply's `text`. */
  text?: string;
  /** A tool-call part's id: the provider's, as in `toolCalls`. */
  toolCallId?: string;
  /** What the provider said of the part (`{ openai: { itemId, reasoningEncryptedContent } }`), as it gave it (JSON). */
  providerMetadata?: Record<string, unknown>;
}

/** What a model provider returns: text, tool calls, usage, and what the provider said of the reply. */
export interface ModelReply {
  text?: string;
  toolCalls?: ReplyToolCall[];
  usage?: Usage;
  /** Why the model stopped (`stop`, `length`, `tool-calls`, `content-filter`, ...). */
  finishReason?: string;
  /**
   * The model's reasoning text, when the provider returns it. Journaled with the reply; sent back to the
   * model only as a part of `parts` (when the provider gave metadata that it needs it back).
   */
  reasoning?: string;
  /** The provider's metadata of the reply, as it gave it (JSON). */
  providerMetadata?: Record<string, unknown>;
  /** The provider's response: its id and the model that answered (which may name a snapshot of the one asked). */
  response?: { id?: string; modelId?: string };
  /**
   * The reply's parts in order, each with the provider's metadata, when the provider gave any: journaled
   * with the reply and sent back on the next turn (the reasoning items of OpenAI's Responses API by id or
   * encrypted content, Anthropic's thinking signatures), which reasoning models need to continue.
   */
  parts?: ReplyPart[];
}
