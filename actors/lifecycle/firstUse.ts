// Asynchronous stand-ins for the lifecycle and fleet functions the app's start, resume and result paths
// call only in rare cases (a subject to check against erasure, an execution id that has no history, an
// execution a fleet worker runs): each loads the real one from ./onFirstUse.ts on its first call, so a
// bundler leaves their code out of an app's start chunks (issue 18). Same signatures, same results.
import type { EventStore, JournalRecord, Stores } from "../../stores/types.js";
import type { ClaimCheckConfig } from "../effects/claimCheckConfig.js";
import type { Effect, EffectContext, EffectMiddleware } from "../effects/effect.js";
import type { ExecutionErasedError } from "../journal/sealing.js";
import type { ResumeSource, ResumeUnfinishedOptions, ResumeUnfinishedResult } from "../journal/unfinished.js";
import type { LifecycleHost } from "./host.js";

const load = () => import("./onFirstUse.js");

/** actors/lifecycle/erasureStatus.ts `assertSubjectOpen`, loaded on first use. */
export async function assertSubjectOpen(host: Pick<LifecycleHost, "events" | "keyStores">, subject: string, executionId?: string): Promise<void> {
  return (await load()).assertSubjectOpen(host, subject, executionId);
}

/** actors/lifecycle/erasureStatus.ts `erasedExecutionError`, loaded on first use. */
export async function erasedExecutionError(events: EventStore, executionId: string): Promise<ExecutionErasedError | undefined> {
  return (await load()).erasedExecutionError(events, executionId);
}

/** actors/journal/unfinished.ts `resumeUnfinished` (app.resumeUnfinished, once at boot), loaded on first use. */
export async function resumeUnfinished(app: ResumeSource, options?: ResumeUnfinishedOptions): Promise<ResumeUnfinishedResult> {
  return (await load()).resumeUnfinished(app, options);
}

/** actors/fleet/submit.ts `isSubmitted`, loaded on first use. */
export async function isSubmitted(stores: Stores, executionId: string): Promise<boolean> {
  return (await load()).isSubmitted(stores, executionId);
}

/** actors/fleet/submit.ts `submittedOutcome`, loaded on first use. */
export async function submittedOutcome(stores: Stores, executionId: string, log: (id: string) => Promise<JournalRecord[]>): Promise<unknown> {
  return (await load()).submittedOutcome(stores, executionId, log);
}

/**
 * actors/effects/claimCheckPreset.ts `claimCheckLayer`: the layer is built when the first step enters it
 * (its code loads then), once, and every step runs through that one layer.
 */
export function claimCheckLayer(config: ClaimCheckConfig, effects: Record<string, Effect>, warn: (error: unknown, ctx: EffectContext) => void): EffectMiddleware {
  let layer: Promise<EffectMiddleware> | undefined;
  return async (ctx, input, next) => {
    layer ??= load().then((m) => m.claimCheckLayer(config, effects, warn));
    return (await layer)(ctx, input, next);
  };
}
