// Effects: the only I/O a journaled machine has. Registered by name in defineConfig({ effects }).

/** What an effect is: a model call (`llm`), a tool, or a hand-written flow step (`task`). */
export type EffectKind = "llm" | "tool" | "task";

/** What an effect (and every middleware) knows about the call it serves. */
export interface EffectContext {
  executionId: string;
  /** Deterministic id of the step in its execution's journal, e.g. `researcher#turn:3:model`. */
  stepId: string;
  /** The name the effect is registered under. */
  effectId: string;
  /** How the runtime invoked it: the registered effect's kind ("tool" for agentLoop$ tool frames). */
  taskKind: EffectKind;
  subject?: string;
  /** 1 on the first run; a retry middleware increments it. */
  attempt: number;
  /** Stable across re-runs of the same step (after a crash): `<executionId>/<stepId>`. Dedupe side effects on it. */
  idempotencyKey: string;
  /** Aborted when the execution stops or the step's state is left. */
  signal: AbortSignal;
}

/** A registered effect. */
export interface Effect<I = any, O = any> {
  kind: EffectKind;
  run(input: I, ctx: EffectContext): Promise<O>;
  /** The result carries media parts the loop renders; never offloaded by the claim-check (ADR 0140 D9). */
  returnsMedia?: boolean;
}

/**
 * The `next` the runtime hands a middleware: it takes an optional context for the inner layers
 * (a retry passes `{ ...ctx, attempt }`, the timeout a context whose `signal` it can abort).
 */
export type Next = (input: unknown, ctx?: EffectContext) => Promise<unknown>;

/** A middleware: sees the call, may change input or output, and calls `next` (or not). */
export type EffectMiddleware = (ctx: EffectContext, input: unknown, next: Next) => Promise<unknown>;

/**
 * A tool effect from a function.
 *
 * @example
 * search: createToolEffect(async ({ q }: { q: string }, ctx) => hits(q))
 */
export function createToolEffect<I, O>(fn: (input: I, ctx: EffectContext) => Promise<O> | O, options: { returnsMedia?: boolean } = {}): Effect<I, O> {
  return { kind: "tool", run: async (input, ctx) => fn(input, ctx), ...(options.returnsMedia ? { returnsMedia: true } : {}) };
}

/** A task effect: hand-written flow steps that are neither a model nor a tool. */
export function createTaskEffect<I, O>(fn: (input: I, ctx: EffectContext) => Promise<O> | O): Effect<I, O> {
  return { kind: "task", run: async (input, ctx) => fn(input, ctx) };
}
