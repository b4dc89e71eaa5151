// The live deltas of a model step: what a streaming provider reports while a turn runs. They reach
// `app.stream` subscribers and are never journaled (only the step's final reply is).
import type { EffectContext } from "../effects/effect.js";

/** The AI SDK's names of the parts a streaming model step reports. */
export const DELTA_TYPES = {
  textDelta: "text-delta",
  reasoningDelta: "reasoning-delta",
  toolInputStart: "tool-input-start",
  toolInputDelta: "tool-input-delta",
  toolCall: "tool-call",
  /** The step's call failed with a retryable error: the deltas since its last `start-step` are void, an attempt follows. */
  retry: "retry",
} as const;

/** One delta as a provider reports it: `type` as the AI SDK names its stream parts. */
export interface ModelDelta {
  type: string;
  /** The text of a `text-delta`, `reasoning-delta` or `tool-input-delta`. */
  delta?: string;
  /** The tool call a `tool-input-*` or `tool-call` part belongs to (the provider's id). */
  id?: string;
  toolName?: string;
  /** A `tool-call`'s parsed input. */
  input?: unknown;
}

/** One part of an execution's stream (`app.stream`): its index, the step it belongs to, and the AI SDK's part type. */
export interface StreamPart extends ModelDelta {
  index: number;
  stepId: string;
  /** A `tool-result`'s output (an error result: `{ error }` and `isError`). */
  output?: unknown;
  isError?: boolean;
}

/** Where the runtime puts a step's delta sink on its EffectContext (a symbol: never JSON, never journaled). */
export const LOOM_DELTAS: unique symbol = Symbol.for("loomwork.deltas");

/** The delta sink the runtime attached to `ctx`, or none outside a runtime. */
export function deltaSinkOf(ctx: EffectContext): ((delta: ModelDelta) => void) | undefined {
  const sink: unknown = Reflect.get(ctx, LOOM_DELTAS);
  return typeof sink === "function" ? (delta: ModelDelta) => void sink(delta) : undefined;
}
