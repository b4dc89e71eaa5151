// The live deltas of a model step: what a streaming provider reports while a turn runs. They reach
// `app.stream` subscribers and are never journaled (only the step's final reply is).
import type { EffectContext, ModelDelta } from "../effects/effect.js";

export type { ModelDelta };

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

/** One part of an execution's stream (`app.stream`): its index, the step it belongs to, and the AI SDK's part type. */
export interface StreamPart extends ModelDelta {
  index: number;
  stepId: string;
  /** A `tool-result`'s output (an error result: `{ error }` and `isError`). */
  output?: unknown;
  isError?: boolean;
  /** A `tool-approval-response`'s decision. */
  approved?: boolean;
  /** A `tool-approval-response`'s reason, when the decision gave one; an `abort`'s reason. */
  reason?: string;
  /** An `error`'s message: why the execution ended in error. */
  error?: string;
  /** In the stream of a tree (a lead's, with its sub-agents'): the sub-agent's execution this part comes from; absent for the streamed execution's own parts. */
  executionId?: string;
  /** With `executionId`: the agent that runs it (its machine's id). */
  agent?: string;
  /** With `executionId`: the id of the parent's tool call this sub-agent answers, when the parent is an agent loop. */
  parentToolCallId?: string;
}

/** The delta sink the runtime gave `ctx` (`ctx.emitDelta`), or none outside a runtime. */
export function deltaSinkOf(ctx: EffectContext): ((delta: ModelDelta) => void) | undefined {
  const sink = ctx.emitDelta;
  return sink ? (delta: ModelDelta) => void sink(delta) : undefined;
}
