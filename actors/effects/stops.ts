// Why a step may enter no further layer of the chain: the kill switch, `app.stop` of its execution, or
// its own aborted signal. `app.stop` also aborts, at once, the signals of the execution's steps still
// in the chain (the journaled stop follows, so none of their outcomes is journaled).
import type { RuntimeBus } from "../bus.js";
import type { StepCall } from "../journal/host.js";
import type { EffectContext } from "./effect.js";
import { EffectStoppedError, type KillSwitch } from "./layers.js";

export class StepStops {
  /** Executions stopped by `app.stop`, until their end is journaled. */
  private readonly stopped = new Map<string, string>();
  /** How to abort each execution's steps still in the chain. */
  private readonly live = new Map<string, Set<(reason: unknown) => void>>();

  constructor(
    private readonly killSwitch: KillSwitch,
    bus: RuntimeBus,
  ) {
    bus.on("ended", ({ executionId }) => this.stopped.delete(executionId));
  }

  /** From now on, no step of the execution enters another layer, and the signals of its running steps are aborted. */
  stop(executionId: string, reason: string): void {
    this.stopped.set(executionId, reason);
    for (const abort of this.live.get(executionId) ?? [])
      abort(new Error(`execution "${executionId}" was stopped (${reason})`));
  }

  /** Throws EffectStoppedError when the step may not go further in the chain. */
  assertRunning(ctx: EffectContext): void {
    const reason = this.reason(ctx);
    if (reason !== undefined) throw new EffectStoppedError(ctx.stepId, reason);
  }

  /**
   * A signal that aborts with the execution's, or when the execution is stopped; tracked while the step runs.
   * The execution's own signal when the call says how to abort it (every journaled step): no second controller per step.
   */
  track(call: StepCall): { signal: AbortSignal; done: () => void } {
    const { executionId } = call;
    let { signal, abort } = call;
    if (!abort) {
      const controller = new AbortController();
      const forward = () => controller.abort(call.signal.reason);
      if (call.signal.aborted) forward();
      else call.signal.addEventListener("abort", forward, { once: true });
      signal = controller.signal;
      abort = (reason) => controller.abort(reason);
    }
    let live = this.live.get(executionId);
    if (!live) this.live.set(executionId, (live = new Set()));
    live.add(abort);
    const tracked = live;
    return {
      signal,
      done: () => {
        tracked.delete(abort);
        if (tracked.size === 0 && this.live.get(executionId) === tracked) this.live.delete(executionId);
      },
    };
  }

  private reason(ctx: EffectContext): string | undefined {
    if (this.killSwitch.engaged) return `the kill switch is engaged (${this.killSwitch.reason})`;
    const stopped = this.stopped.get(ctx.executionId);
    if (stopped !== undefined) return `execution "${ctx.executionId}" was stopped (${stopped})`;
    if (ctx.signal.aborted)
      return "its signal was aborted (the execution stopped, or the state that invoked it was left)";
    return undefined;
  }
}
