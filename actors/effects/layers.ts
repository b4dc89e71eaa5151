// The chain's own layers, outside the capability ring (machines/effectChain.ts): the kill switch, which
// every `next` of the chain consults. Secret redaction (`security.redact`) is its own module,
// ./redaction.ts.
import { LoomworkError } from "../../stores/errors.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";

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
