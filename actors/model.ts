// The one small interface every model provider implements, and the llm effect built on it.
import type { ModelReply, ModelRequest } from "../machines/messages.js";
import type { Effect, EffectContext } from "./effects.js";

export type { Message, ModelReply, ModelRequest, ToolCall, Usage } from "../machines/messages.js";

/** A model provider: scripted, the AI SDK adapter, or your own. */
export interface Model {
  /** A name for logs and metering, e.g. "scripted" or "openai:gpt-4o". */
  readonly id: string;
  generate(request: ModelRequest, ctx: EffectContext): Promise<ModelReply>;
}

/**
 * An llm effect over a provider: input a ModelRequest, output a ModelReply.
 *
 * @example
 * effects: { model: createLlmEffect(scriptedModel([{ text: "hi" }])) }
 */
export function createLlmEffect(model: Model): Effect<ModelRequest, ModelReply> {
  return { kind: "llm", model, run: (request, ctx) => model.generate(request, ctx) };
}
