// What a layer of the effect chain is (machines/effectChain.ts names them, outside in), what it sees of
// the step it runs, and the chain's own outer layer: the kill switch, which every `next` consults.
// Secret redaction (`security.redact`) is its own module, ./redaction.ts.
import type { Usage } from "../../machines/helpers/messages.js";
import { LoomworkError } from "../../stores/errors.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";
import type { Effect, EffectContext, Next } from "./effect.js";
import type { ChainTrace } from "./trace.js";

/** The step was refused by the kill switch (global, or `app.stop` of its execution); it reached no inner layer. */
export class EffectStoppedError extends LoomworkError {
  static override readonly name: string = "EffectStoppedError";
  readonly stepId: string;
  constructor(stepId: string, reason: string) {
    super(RUNTIME_ERROR_CODES.effectStopped, `Step "${stepId}" was stopped before it ran: ${reason}.`);
    this.stepId = stepId;
  }
}

/** The global kill switch: while engaged, every new step (and every transient call) is stopped at the first layer. */
export class KillSwitch {
  private why: string | undefined;

  /** Stops every step that has not yet reached its effect; running effects finish (stop an execution to abort them). */
  engage(reason = "the kill switch is engaged"): void {
    this.why = reason;
  }

  release(): void {
    this.why = undefined;
  }

  get engaged(): boolean {
    return this.why !== undefined;
  }

  /** Why it is engaged, while it is. */
  get reason(): string | undefined {
    return this.why;
  }
}

/** What the chain knows of the one call it runs: the same composed chain serves every step with its own. */
export interface ChainStep {
  readonly effect: Effect;
  /** The invoking machine's id (grants are per logic); "" for a transient call. */
  readonly logicId: string;
  /** False for `invokeTransient`: no claim-check, grants, quotas or metering (nothing is journaled). */
  readonly journaled: boolean;
  /** An llm effect: quotas, guardRequest and metering apply. */
  readonly isModel: boolean;
  /** The step's walk through the effectChain machine (where it stopped). */
  readonly trace: ChainTrace;
  /** Receives the model usage of a completed call (recorded on STEP_COMPLETED). */
  onUsage(usage: Usage): void;
}

/**
 * One layer the configuration installs, built once per app: a middleware (an `EffectMiddleware` is one,
 * it ignores the step), and for which steps it applies. A step it does not apply to never enters it.
 */
export interface StepLayer {
  appliesTo?(step: ChainStep): boolean;
  run(ctx: EffectContext, input: unknown, next: Next, step: ChainStep): unknown;
}
