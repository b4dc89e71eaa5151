// fromAiSdk: any AI SDK LanguageModel of specification v2, v3 or v4 (ai 5, 6 and 7: OpenAI, Anthropic,
// OpenAI-compatible servers, Ollama, ... providers) as a loomwork model provider. Structural types only:
// loomwork does not depend on the `ai` package at run time.
import { deltaSinkOf } from "../../actors/agents/deltas.js";
import type { Model } from "../../actors/agents/model.js";
import type { EffectContext } from "../../actors/effects/effect.js";
import type { ModelCallOptions, ModelReply, ModelRequest } from "../../machines/helpers/messages.js";
import { callOptionsOf } from "./prompt.js";
import { partsOfContent, replyOf } from "./reply.js";
import { consumeStream } from "./stream.js";
import { AI_SDK_SPECIFICATION_VERSIONS, type AiSdkLanguageModel } from "./types.js";

export { AiSdkReplyError } from "./reply.js";
export { AI_SDK_SPECIFICATION_VERSIONS } from "./types.js";
export type {
  AiSdkCallOptions,
  AiSdkFunctionTool,
  AiSdkGenerateResult,
  AiSdkJsonValue,
  AiSdkLanguageModel,
  AiSdkPart,
  AiSdkPromptMessage,
  AiSdkProviderOptions,
  AiSdkSpecificationVersion,
  AiSdkStreamResult,
  AiSdkTextPart,
  AiSdkToolResultOutput,
} from "./types.js";

/** Options of `fromAiSdk`. */
export interface FromAiSdkOptions {
  /**
   * Call the model with `doStream`, so that each step's deltas reach `app.stream` subscribers while it
   * runs (they are never journaled: only the final reply is). `false` calls `doGenerate`.
   * @defaultValue true
   */
  stream?: boolean;
  /** Call options sent with every request (temperature, topP, toolChoice, seed, providerOptions, headers, ...); an agent's `callOptions` override them. */
  callOptions?: ModelCallOptions;
}

const VERSIONS = new Set<unknown>(AI_SDK_SPECIFICATION_VERSIONS);

/**
 * Adapts an AI SDK LanguageModel (specification v2, v3 or v4) to loomwork's Model interface: the
 * transcript as the prompt, each tool with its JSON Schema, the call options passed through; the reply
 * keeps text, the provider's tool-call ids, finishReason, reasoning, usage and providerMetadata.
 *
 * @example
 * import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
 * const local = createOpenAICompatible({ name: "local", baseURL: "http://127.0.0.1:11434/v1" });
 * effects: { model: createLlmEffect(fromAiSdk(local.chatModel("qwen3:4b"), { callOptions: { temperature: 0 } })) }
 */
export function fromAiSdk(languageModel: AiSdkLanguageModel, options: FromAiSdkOptions = {}): Model {
  if (!VERSIONS.has(languageModel?.specificationVersion) || typeof languageModel.doGenerate !== "function") {
    throw new TypeError(
      `fromAiSdk(model): an AI SDK LanguageModel with specificationVersion "v2", "v3" or "v4" (ai 5, 6 or 7 providers); ` +
        `got specificationVersion ${JSON.stringify(languageModel?.specificationVersion)}.`,
    );
  }
  const streaming = options.stream !== false && typeof languageModel.doStream === "function";
  const defaults = options.callOptions ?? {};
  return {
    id: `${languageModel.provider}:${languageModel.modelId}`,
    provider: languageModel.provider,
    modelId: languageModel.modelId,
    async generate(request: ModelRequest, ctx: EffectContext): Promise<ModelReply> {
      const call = callOptionsOf(request, defaults, ctx.signal);
      if (!streaming) {
        const result = await languageModel.doGenerate(call);
        return replyOf({
          ...partsOfContent(result.content),
          finishReason: result.finishReason,
          usage: result.usage,
          providerMetadata: result.providerMetadata,
          response: result.response,
        });
      }
      const { stream } = await languageModel.doStream(call);
      return replyOf(await consumeStream(stream, deltaSinkOf(ctx), ctx.signal));
    },
  };
}
