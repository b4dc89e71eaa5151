// The path one effect step takes through the middleware chain, as a pure machine (ADR 0140 D5).
// Its states are the layers, outside in; its final states are how the step ended. The runtime
// (actors/effects/trace.ts) drives it with the pure transition() API while the chain runs, so every
// live step knows the innermost layer it reached; a STEP_FAILED record journals that as `stoppedAt`.
// No I/O, no clock: paste it into the Stately visualizer as is.
import { assign, setup } from "xstate";

/** The chain's layers, outside in. */
export const CHAIN_LAYERS = ["killSwitch", "claimCheck", "redaction", "capabilities", "middleware", "effect"] as const;

/** A layer of the chain: the state a step is in while that layer handles it. */
export type ChainLayer = (typeof CHAIN_LAYERS)[number];

/** How a step left the chain: the machine's final states. */
export type ChainOutcome = "completed" | "stopped" | "refused" | "failed" | "timedOut";

/** The effect chain's final states: how a live step ended. */
export const CHAIN_OUTCOMES: readonly ChainOutcome[] = ["completed", "stopped", "refused", "failed", "timedOut"];

/**
 * What the runtime observes while a step runs through the chain:
 * - `PASS`: the current layer handed the call to the next one inward (layers that are not configured pass at once);
 * - `RESOLVE`: the chain resolved with an output (the effect returned, or a middleware answered without calling it);
 * - `STOP`: the kill switch (global, or `app.stop` of the execution) refused the call before an inner layer;
 * - `REFUSE`: the capability ring refused it (grant, quota, guardRequest);
 * - `TIMEOUT`: the effect timeout fired;
 * - `FAIL`: any other error.
 */
export type EffectChainEvent =
  | { type: "PASS" }
  | { type: "RESOLVE" }
  | { type: "STOP" }
  | { type: "REFUSE" }
  | { type: "TIMEOUT" }
  | { type: "FAIL" };

/** The events that end a step: every event but PASS. */
type Ending = Exclude<EffectChainEvent["type"], "PASS">;
const ENDINGS: readonly Ending[] = ["RESOLVE", "STOP", "REFUSE", "TIMEOUT", "FAIL"];

export interface EffectChainInput {
  /**
   * A live step (the runtime's walk): every layer also takes the endings it does not produce itself, so
   * every walk ends in an outcome. Without it (the visualizer, xstate/graph) the machine shows only the
   * endings each layer produces.
   */
  live?: boolean;
}

export interface EffectChainContext {
  live: boolean;
  /** The innermost layer a step reached before it ended without an output; null while it runs or once it completed. */
  stoppedAt: ChainLayer | null;
}

export interface EffectChainOutput {
  stoppedAt: ChainLayer | null;
}

/**
 * What an ending a layer does not produce itself means there, on a live walk: an output is an output (a
 * claim-check that answered without calling inward completed the step), anything thrown is a failure of
 * the layer it reached (an effect that throws a refusal of a nested call failed; it was not refused).
 */
const UNDECLARED: Record<Ending, ChainOutcome> = {
  RESOLVE: "completed",
  STOP: "failed",
  REFUSE: "failed",
  TIMEOUT: "failed",
  FAIL: "failed",
};

interface Ends {
  target: ChainOutcome;
  guard?: "live";
  actions?: { type: "stopAt"; params: { layer: ChainLayer } };
}

/** One layer's state: PASS inward, its own endings, and (on a live walk only) every other ending. */
function layer(
  name: ChainLayer,
  description: string,
  pass: ChainLayer | null,
  endings: Partial<Record<Ending, ChainOutcome>>,
) {
  const end = (target: ChainOutcome, guard?: "live"): Ends => ({
    target,
    ...(guard ? { guard } : {}),
    ...(target === "completed" ? {} : { actions: { type: "stopAt", params: { layer: name } } }),
  });
  const on: Partial<Record<EffectChainEvent["type"], ChainLayer | Ends>> = pass ? { PASS: pass } : {};
  for (const ending of ENDINGS) {
    const declared = endings[ending];
    on[ending] = declared ? end(declared) : end(UNDECLARED[ending], "live");
  }
  return { description, on };
}

/**
 * The effect chain, outside in: kill switch -> claim-check -> secret redaction -> the capability ring
 * (grants, quotas, guardRequest, metering, retry, timeout) -> each `execution.effectMiddleware` entry
 * -> the effect. The final state a walk ends in is its outcome; `stoppedAt` names the innermost layer
 * a step that did not complete reached: anything but "effect" means the effect never ran.
 */
export const effectChain = setup({
  types: {} as {
    context: EffectChainContext;
    events: EffectChainEvent;
    input: EffectChainInput | void;
    output: EffectChainOutput;
  },
  actions: {
    stopAt: assign((_, params: { layer: ChainLayer }) => ({ stoppedAt: params.layer })),
  },
  guards: {
    live: ({ context }) => context.live,
  },
}).createMachine({
  id: "effectChain",
  context: ({ input }) => ({ live: input?.live === true, stoppedAt: null }),
  initial: "killSwitch",
  states: {
    killSwitch: layer(
      "killSwitch",
      "Refuses every call while app.killSwitch is engaged or the execution was stopped.",
      "claimCheck",
      {
        STOP: "stopped",
      },
    ),
    claimCheck: layer(
      "claimCheck",
      "ADR 0140: offloads a listed tool's over-cap result to the content store (when configured).",
      "redaction",
      {
        STOP: "stopped",
        FAIL: "failed",
      },
    ),
    // Redaction hands every call inward at once and scrubs what comes back (an output it cannot check as
    // JSON fails the step where it was produced), so it ends no walk of its own.
    redaction: layer(
      "redaction",
      "security.redact: scrubs secrets from the result (and errors) before any outer layer or the journal sees them.",
      "capabilities",
      {},
    ),
    capabilities: layer(
      "capabilities",
      "The ring the app installs: grants, quotas, guardRequest, metering, retry, timeout.",
      "middleware",
      {
        STOP: "stopped",
        REFUSE: "refused",
        FAIL: "failed",
      },
    ),
    middleware: layer("middleware", "Each execution.effectMiddleware entry, in order.", "effect", {
      RESOLVE: "completed",
      STOP: "stopped",
      TIMEOUT: "timedOut",
      FAIL: "failed",
    }),
    effect: layer("effect", "The registered effect ran (at least once: a retry may run it again).", null, {
      RESOLVE: "completed",
      STOP: "stopped",
      TIMEOUT: "timedOut",
      FAIL: "failed",
    }),
    completed: { type: "final" },
    stopped: { type: "final" },
    refused: { type: "final" },
    failed: { type: "final" },
    timedOut: { type: "final" },
  },
  output: ({ context }) => ({ stoppedAt: context.stoppedAt }),
});
