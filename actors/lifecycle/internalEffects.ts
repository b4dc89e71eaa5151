// The runtime's own effects: the steps of the sweep and the erase coordinator, which run as journaled
// executions like any machine. They are registered by the app, not by `defineConfig({ effects })`:
// - user config cannot see them: a user machine that invokes one is refused at start (UnknownEffectError),
//   and an effect id under the reserved `loom.` prefix is refused at boot;
// - they bypass the effect chain (kill switch, claim-check, redaction, the capability ring, user
//   middleware): grants cannot restrict them, a middleware never sees them, and the kill switch, which
//   stops agents' model and tool calls, does not block erasure or a sweep;
// - they are journaled like any step: STEP_COMPLETED / STEP_FAILED by a deterministic step id, served from
//   the log on resume. Each one is idempotent, because a crash before its outcome is journaled re-runs it.
import { ERASE_COORDINATOR_LOGIC_ID } from "../../machines/eraseCoordinator.js";
import { SWEEP_LOGIC_ID } from "../../machines/sweep.js";
import type { ContentStore, JournalRecord, KeyStore } from "../../stores/types.js";
import type { App } from "../app.js";
import { claimCheckTrustOf, type ClaimCheckTrust } from "./citations.js";

/** Effect ids under this prefix belong to the runtime. */
export const INTERNAL_EFFECT_PREFIX = "loom.";

export interface InternalEffectContext {
  app: App;
  executionId: string;
  stepId: string;
  signal: AbortSignal;
  /**
   * Appends a control record (`loom.erasure.*`) to this execution's log, between two macrosteps, and
   * resolves its seq. Replay skips control records (Execution.recover), so the log stays replayable.
   */
  appendControl(record: Omit<JournalRecord, "seq" | "at">): Promise<number>;
  /** This execution's log so far, opened: an idempotent step looks for the control record it may already have written. */
  readOwnLog(): Promise<JournalRecord[]>;
}

export interface InternalEffect {
  run(input: any, ctx: InternalEffectContext): Promise<unknown>;
}

const INTERNAL_LOGIC_IDS = new Set<string>([SWEEP_LOGIC_ID, ERASE_COORDINATOR_LOGIC_ID]);

/** True for the runtime's own executions (sweeps, erase coordinators): they cite no content and hold no subject data. */
export function isInternalLogic(logicId: string | undefined): boolean {
  return logicId !== undefined && INTERNAL_LOGIC_IDS.has(logicId);
}

// The content store a standalone sweepUnpinnedContent / eraseSubject host was given none of.
const unwired = (): never => {
  throw new TypeError("No content store is wired: pass { content } (the store execution.claimCheck writes to).");
};
/** A placeholder ContentStore for a host without one; `lifecycleContentOf` reports it as undefined. */
export const UNWIRED_CONTENT: ContentStore = Object.freeze({
  spiVersion: "0.0.0",
  sealsContent: false,
  put: unwired,
  get: unwired,
  has: unwired,
  list: unwired,
});

/** The content store claim-checked blobs live in: execution.claimCheck.store, else stores.content; undefined when none is wired. */
export function lifecycleContentOf(app: App): ContentStore | undefined {
  const store = app.config.execution?.claimCheck?.store ?? app.stores.content;
  return store === UNWIRED_CONTENT || !store ? undefined : store;
}

/** The key stores that may hold the subject's key (security.crypto's and the app's stores), without repeats. */
export function keyStoresOf(app: App): KeyStore[] {
  const stores = [app.config.security?.crypto?.keys, app.stores.keys].filter((k): k is KeyStore => k !== undefined);
  return [...new Set(stores)];
}

// A host app built over bare stores has no claim-check config to derive the writer check from.
const trustOverrides = new WeakMap<App, ClaimCheckTrust>();

/** Sets the writer check a host app uses instead of deriving it from its config (standalone entry points). */
export function setClaimCheckTrust(app: App, trust: ClaimCheckTrust): void {
  trustOverrides.set(app, trust);
}

/** Which recorded steps may vouch for a blob in this app (see `claimCheckTrustOf`); undefined: the position alone. */
export function claimCheckTrustFor(app: App): ClaimCheckTrust | undefined {
  return trustOverrides.get(app) ?? claimCheckTrustOf(app.config);
}
