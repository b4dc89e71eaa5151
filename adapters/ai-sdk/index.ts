// fromAiSdk: any AI SDK LanguageModel (specification v2: OpenAI, Anthropic, Ollama, ... providers) as a
// loomwork model provider. Structural types only: loomwork does not depend on the `ai` package at run time.
import { RUNTIME_ERROR_CODES } from "../../actors/constants.js";
import type { EffectContext } from "../../actors/effects/effect.js";
import type { Model } from "../../actors/agents/model.js";
import type { Message, ModelReply, ModelRequest } from "../../machines/helpers/messages.js";
import { contentText } from "../../machines/helpers/taint.js";
import { LoomworkTypeError } from "../../stores/errors.js";

type Part = { type: string; [field: string]: unknown };
type PromptMessage = { role: "system"; content: string } | { role: "user" | "assistant" | "tool"; content: Part[] };

/** The slice of the AI SDK's LanguageModelV2 that loomwork calls. */
export interface AiSdkLanguageModel {
  readonly specificationVersion: "v2";
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: {
    prompt: PromptMessage[];
    maxOutputTokens?: number;
    tools?: { type: "function"; name: string; description?: string; inputSchema: object }[];
    abortSignal?: AbortSignal;
  }): PromiseLike<{ content: Part[]; usage?: { inputTokens?: number; outputTokens?: number } }>;
}

/** The AI SDK returned a tool call whose input is not JSON. A `TypeError`, as before it had a `code`. */
export class AiSdkReplyError extends LoomworkTypeError {
  constructor(message: string) {
    super(RUNTIME_ERROR_CODES.aiSdkReply, message);
  }
}

/**
 * Adapts an AI SDK LanguageModel (v2) to loomwork's Model interface.
 *
 * @example
 * import { openai } from "@ai-sdk/openai";
 * effects: { model: createLlmEffect(fromAiSdk(openai("gpt-4o-mini"))) }
 */
export function fromAiSdk(languageModel: AiSdkLanguageModel): Model {
  if (languageModel?.specificationVersion !== "v2" || typeof languageModel.doGenerate !== "function") {
    throw new TypeError("fromAiSdk(model): an AI SDK LanguageModel with specificationVersion \"v2\" (ai 5.x providers).");
  }
  return {
    id: `${languageModel.provider}:${languageModel.modelId}`,
    async generate(request: ModelRequest, ctx: EffectContext): Promise<ModelReply> {
      const result = await languageModel.doGenerate({
        prompt: request.messages.map(toPrompt),
        ...(request.maxTokens === undefined ? {} : { maxOutputTokens: request.maxTokens }),
        ...(request.tools.length
          ? { tools: request.tools.map((t) => ({ type: "function" as const, name: t.name, ...(t.description ? { description: t.description } : {}), inputSchema: { type: "object" } })) }
          : {}),
        abortSignal: ctx.signal,
      });
      const text = result.content.filter((p) => p.type === "text").map((p) => String(p.text)).join("");
      const toolCalls = result.content
        .filter((p) => p.type === "tool-call")
        .map((p) => ({ toolName: String(p.toolName), input: parseInput(p.input, String(p.toolName)) }));
      return {
        ...(text ? { text } : {}),
        ...(toolCalls.length ? { toolCalls } : {}),
        ...(result.usage ? { usage: { inputTokens: result.usage.inputTokens ?? 0, outputTokens: result.usage.outputTokens ?? 0 } } : {}),
      };
    },
  };
}

function toPrompt(message: Message): PromptMessage {
  const text = contentText(message.content);
  switch (message.role) {
    case "system":
      return { role: "system", content: text };
    case "user":
      return { role: "user", content: [{ type: "text", text }] };
    case "assistant":
      return {
        role: "assistant",
        content: [
          ...(text ? [{ type: "text", text }] : []),
          ...(message.toolCalls ?? []).map((c) => ({ type: "tool-call", toolCallId: c.id, toolName: c.toolName, input: c.input })),
        ],
      };
    case "tool":
      return {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: message.toolCallId ?? "",
            toolName: message.toolName ?? "",
            output: typeof message.content === "string" ? { type: "text", value: message.content } : { type: "json", value: message.content ?? null },
          },
        ],
      };
  }
}

function parseInput(input: unknown, toolName: string): unknown {
  if (typeof input !== "string") return input ?? {};
  try {
    return input === "" ? {} : JSON.parse(input);
  } catch {
    throw new AiSdkReplyError(`The model called tool "${toolName}" with input that is not JSON: ${input.slice(0, 200)}`);
  }
}
