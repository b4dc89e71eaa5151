// `app.invokeTransient`: an effect run through the app's chain outside any journal. Never claim-checked,
// never recorded, no grants, quotas or metering (there is no execution); the kill switch, redaction,
// guardRequest, retry, timeout and the user middleware apply. Rejects with the effect's own (typed) error.
import { TRANSIENT_EXECUTION_ID } from "../constants.js";
import { UnknownEffectError } from "../errors.js";
import type { EffectChain } from "./chain.js";
import type { Effect, EffectContext } from "./effect.js";
import { ChainTrace } from "./trace.js";

export class TransientCalls {
  /** Numbers each call's step id (`transient:<effectId>:<n>`). */
  private calls = 0;

  constructor(
    private readonly effects: Record<string, Effect>,
    private readonly chain: () => EffectChain,
    /** Completes a call's context with what the runtime gives every effect (clock, deltas, the effects lookup). */
    private readonly complete: (ctx: EffectContext) => EffectContext,
  ) {}

  invoke(effectId: string, input: unknown, options: { signal?: AbortSignal; subject?: string } = {}): Promise<unknown> {
    const effect = this.effects[effectId];
    if (!effect)
      return Promise.reject(new UnknownEffectError("(invokeTransient)", effectId, Object.keys(this.effects)));
    const n = ++this.calls;
    const ctx = this.complete({
      executionId: TRANSIENT_EXECUTION_ID,
      stepId: `transient:${effectId}:${n}`,
      effectId,
      taskKind: effect.kind,
      ...(options.subject === undefined ? {} : { subject: options.subject }),
      attempt: 1,
      idempotencyKey: `${TRANSIENT_EXECUTION_ID}/${effectId}/${globalThis.crypto.randomUUID()}`,
      signal: options.signal ?? new AbortController().signal,
    });
    const step = {
      effect,
      logicId: "",
      journaled: false,
      isModel: effect.kind === "llm",
      trace: new ChainTrace(),
      onUsage: () => undefined,
    };
    return this.chain().run(step, ctx, input);
  }
}
