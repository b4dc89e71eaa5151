// The one small interface every model provider implements, and the llm effect built on it.
import type { ModelReply, ModelRequest } from "../../machines/helpers/messages.js";
import type { Effect, EffectContext, ModelInfo } from "../effects/effect.js";
import { ModelReplyError } from "../errors.js";
import { deltaSinkOf, DELTA_TYPES } from "./deltas.js";
import { checkModelRetry, withModelRetry, type ModelRetryOptions } from "./modelRetry.js";
import { markApprovals, withToolSpecs } from "./toolSpecs.js";

export type {
  Message,
  ModelCallOptions,
  ModelReply,
  ModelRequest,
  ReplyPart,
  ReplyToolCall,
  ToolCall,
  ToolChoice,
  ToolModelOutput,
  ToolSpec,
  Usage,
} from "../../machines/helpers/messages.js";

/** Options of `createLlmEffect`. */
export interface LlmEffectOptions {
  /**
   * Retries of a retryable provider error (connection refused, 408, 409, 429, 5xx, `isRetryable`), on the
   * app's clock, honouring `Retry-After`; only the final outcome is journaled, and `usage.attempts`
   * counts the calls when there was more than one. `false` turns them off.
   * @defaultValue DEFAULT_MODEL_RETRY (5 attempts, 500 ms doubling to 30 s, Retry-After up to 60 s)
   */
  retry?: ModelRetryOptions | false;
}

/** A model provider: scripted, the AI SDK adapter, or your own. */
export interface Model extends ModelInfo {
  generate(request: ModelRequest, ctx: EffectContext): Promise<ModelReply>;
}

/**
 * An llm effect over a provider: input a ModelRequest, output a ModelReply. A reply that is not a
 * ModelReply fails the step with ModelReplyError naming the step and the field (see `checkModelReply`).
 *
 * @example
 * effects: { model: createLlmEffect(scriptedModel([{ text: "hi" }])) }
 */
export function createLlmEffect(model: Model, options: LlmEffectOptions = {}): Effect<ModelRequest, ModelReply> {
  const retry = options.retry ?? {};
  if (retry !== false) checkModelRetry(retry, "createLlmEffect.retry");
  return {
    kind: "llm",
    model,
    run: async (request, ctx) => {
      // The registered tools' descriptions and JSON Schemas join the request here: it is never journaled.
      // So do the tools' projections of their results (toModelOutput), from the journaled outputs.
      const withTools: ModelRequest = Array.isArray(request?.tools)
        ? { ...request, tools: withToolSpecs(request.tools, ctx) }
        : request;
      const messages = withTools?.messages;
      const full: ModelRequest = Array.isArray(messages)
        ? {
            ...withTools,
            messages: await Promise.all(
              messages.map(
                (m) => (m.role === "tool" && ctx.effectOf?.(m.toolName!)?.projectResult?.(m, messages)) || m,
              ),
            ),
          }
        : withTools;
      const emit = deltaSinkOf(ctx);
      const { value: given, attempts } = await withModelRetry(retry, ctx, async (attempt) => {
        if (attempt > 1) emit?.({ type: DELTA_TYPES.retry });
        return model.generate(full, attempt > 1 ? { ...ctx, attempt } : ctx);
      });
      checkModelReply(given, ctx.stepId);
      const reply = await markApprovals(given, ctx);
      if (attempts === 1) return reply;
      return {
        ...reply,
        usage: {
          inputTokens: reply.usage?.inputTokens ?? 0,
          outputTokens: reply.usage?.outputTokens ?? 0,
          ...reply.usage,
          attempts,
        },
      };
    },
  };
}

/**
 * Refuses a value that is not a ModelReply with ModelReplyError naming `stepId` and the field: the reply
 * is an object; `text`, when present, a string; `toolCalls`, when present, an array of objects with a
 * non-empty string `toolName`. `usage` is metered only when well-formed and never refused.
 */
export function checkModelReply(reply: unknown, stepId: string): asserts reply is ModelReply {
  if (typeof reply !== "object" || reply === null || Array.isArray(reply)) {
    throw new ModelReplyError(stepId, "reply", `is ${shown(reply)}, not an object`);
  }
  const text = "text" in reply ? reply.text : undefined;
  const toolCalls = "toolCalls" in reply ? reply.toolCalls : undefined;
  if (text !== undefined && typeof text !== "string")
    throw new ModelReplyError(stepId, "text", `is ${shown(text)}, not a string`);
  if (toolCalls === undefined) return;
  if (!Array.isArray(toolCalls)) throw new ModelReplyError(stepId, "toolCalls", `is ${shown(toolCalls)}, not an array`);
  toolCalls.forEach((call: unknown, j) => {
    if (typeof call !== "object" || call === null || Array.isArray(call))
      throw new ModelReplyError(stepId, `toolCalls[${j}]`, `is ${shown(call)}, not { toolName, input }`);
    const name = "toolName" in call ? call.toolName : undefined;
    if (typeof name !== "string" || name === "")
      throw new ModelReplyError(stepId, `toolCalls[${j}].toolName`, `is ${shown(name)}, not a tool's name`);
  });
}

function shown(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return typeof value === "object" ? "an object" : `the ${typeof value} ${String(value)}`;
}
