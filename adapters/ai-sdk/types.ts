// The slice of the AI SDK's LanguageModel (specification v2, v3 and v4) that loomwork calls, as structural
// types: a provider's model and the AI SDK's mock models are assignable to it without a cast, and loomwork
// does not depend on the `ai` package or `@ai-sdk/provider` at run time.

/** The specification versions `fromAiSdk` speaks: v2 (ai 5), v3 (ai 6), v4 (ai 7). */
export const AI_SDK_SPECIFICATION_VERSIONS = ["v2", "v3", "v4"] as const;
export type AiSdkSpecificationVersion = (typeof AI_SDK_SPECIFICATION_VERSIONS)[number];

/** A JSON value, as the AI SDK's `JSONValue`. */
export type AiSdkJsonValue = null | string | number | boolean | { [key: string]: AiSdkJsonValue } | AiSdkJsonValue[];

/** A tool result's output, in the forms every supported version knows. */
export type AiSdkToolResultOutput =
  | { type: "text"; value: string }
  | { type: "json"; value: AiSdkJsonValue }
  | { type: "error-text"; value: string }
  | { type: "error-json"; value: AiSdkJsonValue }
  /**
   * A tool's projection (`toModelOutput`) into parts. Typed as the one part every version knows; the media
   * parts a tool gives (v2's `media`, v3 and v4's `image-data`, `file-data`, ...) are passed as the tool gave them.
   */
  | { type: "content"; value: AiSdkTextPart[] };

/** A text part of a tool result's content. */
export interface AiSdkTextPart {
  type: "text";
  text: string;
}

/** A prompt message as every supported version spells it (the parts loomwork sends). */
export type AiSdkPromptMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: { type: "text"; text: string }[] }
  | {
      role: "assistant";
      content: (
        | { type: "text"; text: string; providerOptions?: AiSdkProviderOptions }
        | { type: "reasoning"; text: string; providerOptions?: AiSdkProviderOptions }
        | {
            type: "tool-call";
            toolCallId: string;
            toolName: string;
            input: unknown;
            providerOptions?: AiSdkProviderOptions;
          }
      )[];
    }
  | {
      role: "tool";
      content: { type: "tool-result"; toolCallId: string; toolName: string; output: AiSdkToolResultOutput }[];
    };

/** Provider options of a call or a part, by provider name (the AI SDK's `SharedV2ProviderOptions` and later). */
export type AiSdkProviderOptions = Record<string, Record<string, AiSdkJsonValue>>;

/** A function tool as the model receives it. */
export interface AiSdkFunctionTool {
  type: "function";
  name: string;
  description?: string;
  /** The tool input's JSON Schema (draft 7). */
  inputSchema: object;
}

/** The call options loomwork sends (the AI SDK's `LanguageModelV2CallOptions` and later, in part). */
export interface AiSdkCallOptions {
  prompt: AiSdkPromptMessage[];
  maxOutputTokens?: number;
  temperature?: number;
  stopSequences?: string[];
  topP?: number;
  topK?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  tools?: AiSdkFunctionTool[];
  toolChoice?: { type: "auto" | "none" | "required" } | { type: "tool"; toolName: string };
  abortSignal?: AbortSignal;
  headers?: Record<string, string | undefined>;
  providerOptions?: Record<string, Record<string, AiSdkJsonValue>>;
}

/** A part of a reply or a stream: read by its `type`, each field narrowed where it is used. */
export interface AiSdkPart {
  readonly type: string;
}

/** What `doGenerate` resolves: content parts, finish reason, usage and metadata in any supported version's shape. */
export interface AiSdkGenerateResult {
  content: readonly AiSdkPart[];
  finishReason?: unknown;
  usage?: unknown;
  providerMetadata?: unknown;
  /** The response's id and model id (and timestamp, headers, body), in any supported version's shape. */
  response?: unknown;
}

/** What `doStream` resolves: a stream of parts. */
export interface AiSdkStreamResult {
  stream: ReadableStream<AiSdkPart>;
}

/**
 * An AI SDK LanguageModel of specification v2, v3 or v4: what `openai("gpt-4o-mini")`,
 * `createOpenAICompatible({...}).chatModel(id)`, `anthropic(...)`, `ollama(...)` and the AI SDK's
 * `MockLanguageModelV2/V3/V4` return. Methods, so that every version's call options are accepted.
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: AiSdkSpecificationVersion;
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: AiSdkCallOptions): PromiseLike<AiSdkGenerateResult>;
  doStream(options: AiSdkCallOptions): PromiseLike<AiSdkStreamResult>;
}
