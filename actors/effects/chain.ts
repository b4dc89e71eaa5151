// The effect chain (ADR 0140 D5), described once and composed once per app: kill switch -> claim-check
// -> secret redaction -> the capability ring -> each execution.effectMiddleware entry -> the effect.
// The order is the effectChain machine's (CHAIN_LAYERS, machines/effectChain.ts): `LAYERS` says what
// the configuration installs in each of its layers, nothing else orders them. Every step, journaled or
// transient, runs the same composed chain with its own `ChainStep`; the step's walk through the machine
// (./trace.ts) records the innermost layer it reached (STEP_FAILED.stoppedAt). Replay never runs it.
import { CHAIN_LAYERS, type ChainLayer } from "../../machines/effectChain.js";
import type { LoomConfig } from "../config.js";
import { capabilityRing } from "./capabilities.js";
import type { EffectContext, EffectMiddleware, Next } from "./effect.js";
import type { ChainStep, StepLayer } from "./layers.js";
import type { Meter } from "./meter.js";
import { redactionLayer } from "./redaction.js";
import type { StepStops } from "./stops.js";

// The chain's public names, where index.ts reads them.
export { TRANSIENT_EXECUTION_ID } from "../constants.js";
export { EffectStoppedError, KillSwitch } from "./layers.js";

/** What the chain is built from: the configuration, and the app's parts its layers use. */
export interface ChainParts {
  readonly config: LoomConfig;
  readonly stops: StepStops;
  readonly meter: Meter;
  /** The claim-check layer, when execution.claimCheck is configured (./claimCheckPreset.ts). */
  readonly claimCheck?: EffectMiddleware | undefined;
}

/** What the configuration installs in each layer of the machine but the effect, in the layer's own order. */
const LAYERS: { readonly [L in Exclude<ChainLayer, "effect">]: (parts: ChainParts) => StepLayer[] } = {
  // Consulted again by every `next`: a stopped step reaches no inner layer.
  killSwitch: ({ stops }) => [
    {
      run: (ctx, input, next) => {
        stops.assertRunning(ctx);
        return next(input);
      },
    },
  ],
  // A transient call is never claim-checked: nothing would cite the blob.
  claimCheck: ({ claimCheck }) => (claimCheck ? [{ appliesTo: (step) => step.journaled, run: claimCheck }] : []),
  redaction: ({ config }) => {
    const redact = config.security?.redact;
    return redact ? [{ run: redactionLayer(redact) }] : [];
  },
  capabilities: ({ config, meter }) => capabilityRing(config.capabilities, meter),
  middleware: ({ config }) => (config.execution?.effectMiddleware ?? []).map((run) => ({ run })),
};

type Run = (step: ChainStep, ctx: EffectContext, input: unknown) => Promise<unknown>;

// `fn()` as a promise: a synchronous throw becomes a rejection, as `Promise.try` (ES2025) does.
function promiseTry(fn: () => unknown): Promise<unknown> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(error);
  }
}

export class EffectChain {
  /** The installed layers, outside in, each named by its state in the machine. */
  readonly layers: readonly (StepLayer & { readonly layer: ChainLayer })[];
  private readonly enter: Run;

  constructor(readonly parts: ChainParts) {
    this.layers = CHAIN_LAYERS.flatMap((layer) =>
      layer === "effect" ? [] : LAYERS[layer](parts).map((installed) => ({ ...installed, layer })),
    );
    const { stops } = parts;
    const innermost: Run = (step, ctx, input) => {
      step.trace.reach("effect");
      return promiseTry(() => step.effect.run(input, ctx));
    };
    // One explicit reduce, Dexie-style. Entering a layer moves the step's walk inward; every `next` first
    // consults the stops; a layer that does not apply to the step is passed over, never entered.
    this.enter = this.layers.reduceRight<Run>(
      (inner, layer) => (step, ctx, input) => {
        if (layer.appliesTo && !layer.appliesTo(step)) return inner(step, ctx, input);
        step.trace.reach(layer.layer);
        const next: Next = (nextInput, nextCtx = ctx) =>
          promiseTry(() => {
            stops.assertRunning(nextCtx);
            return inner(step, nextCtx, nextInput);
          });
        return promiseTry(() => layer.run(ctx, input, next, step));
      },
      innermost,
    );
  }

  /** Runs one call through the chain with what the chain knows of it; resolves the output, rejects with what the chain threw. */
  run(step: ChainStep, ctx: EffectContext, input: unknown): Promise<unknown> {
    return this.enter(step, ctx, input);
  }

  /** The same chain with another claim-check layer (the runtime's own tests swap it in). */
  withClaimCheck(claimCheck: EffectMiddleware | undefined): EffectChain {
    return new EffectChain({ ...this.parts, claimCheck });
  }
}
