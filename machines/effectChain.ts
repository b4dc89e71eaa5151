// The path one effect step takes through the middleware chain, as a pure machine (ADR 0140 D5).
// Its states are the layers, outside in; its final states are how the step ended. The runtime
// (actors/effects/chain.ts) drives it with the pure transition() API while the chain runs, so every
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

export interface EffectChainContext {
  /** The innermost layer the step reached before it ended without an output; null while running or once completed. */
  stoppedAt: ChainLayer | null;
}

export interface EffectChainOutput {
  stoppedAt: ChainLayer | null;
}

/**
 * The effect chain, outside in: kill switch -> claim-check -> secret redaction -> the capability ring
 * (grants, quotas, guardRequest, metering, retry, timeout) -> each `execution.effectMiddleware` entry
 * -> the effect. `stoppedAt` names the innermost layer a failed step reached: anything but "effect"
 * means the effect never ran.
 */
export const effectChain = setup({
  types: {} as {
    context: EffectChainContext;
    events: EffectChainEvent;
    output: EffectChainOutput;
  },
}).createMachine({
  id: "effectChain",
  context: { stoppedAt: null },
  initial: "killSwitch",
  states: {
    killSwitch: {
      description: "Refuses every call while app.killSwitch is engaged or the execution was stopped.",
      on: {
        PASS: "claimCheck",
        STOP: { target: "stopped", actions: assign({ stoppedAt: "killSwitch" }) },
      },
    },
    claimCheck: {
      description: "ADR 0140: offloads a listed tool's over-cap result to the content store (when configured).",
      on: {
        PASS: "redaction",
        STOP: { target: "stopped", actions: assign({ stoppedAt: "claimCheck" }) },
        FAIL: { target: "failed", actions: assign({ stoppedAt: "claimCheck" }) },
      },
    },
    redaction: {
      description: "security.redact: scrubs secrets from the result (and errors) before any outer layer or the journal sees them.",
      on: {
        PASS: "capabilities",
      },
    },
    capabilities: {
      description: "The ring the app installs: grants, quotas, guardRequest, metering, retry, timeout.",
      on: {
        PASS: "middleware",
        STOP: { target: "stopped", actions: assign({ stoppedAt: "capabilities" }) },
        REFUSE: { target: "refused", actions: assign({ stoppedAt: "capabilities" }) },
        FAIL: { target: "failed", actions: assign({ stoppedAt: "capabilities" }) },
      },
    },
    middleware: {
      description: "Each execution.effectMiddleware entry, in order.",
      on: {
        PASS: "effect",
        RESOLVE: "completed",
        STOP: { target: "stopped", actions: assign({ stoppedAt: "middleware" }) },
        TIMEOUT: { target: "timedOut", actions: assign({ stoppedAt: "middleware" }) },
        FAIL: { target: "failed", actions: assign({ stoppedAt: "middleware" }) },
      },
    },
    effect: {
      description: "The registered effect ran (at least once: a retry may run it again).",
      on: {
        RESOLVE: "completed",
        STOP: { target: "stopped", actions: assign({ stoppedAt: "effect" }) },
        TIMEOUT: { target: "timedOut", actions: assign({ stoppedAt: "effect" }) },
        FAIL: { target: "failed", actions: assign({ stoppedAt: "effect" }) },
      },
    },
    completed: { type: "final" },
    stopped: { type: "final" },
    refused: { type: "final" },
    failed: { type: "final" },
    timedOut: { type: "final" },
  },
  output: ({ context }) => ({ stoppedAt: context.stoppedAt }),
});
