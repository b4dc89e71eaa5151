// The LifecycleHost port: what the data-lifecycle modules (sweep, erase, export, retention and the internal
// effects of the maintenance executions) use of the app that runs them, and what they keep per app between
// two calls. The app builds its host once, with `createLifecycleHost`; nothing in actors/lifecycle holds
// or takes the App itself, so the lifecycle and the app do not import each other.
import type { AnyStateMachine } from "xstate";
import type { EraseSubjectResult } from "../../machines/eraseCoordinator.js";
import {
  ERASE_COORDINATOR_LOGIC_ID,
  ERASE_EFFECTS,
  RETENTION_EFFECTS,
  RETENTION_LOGIC_ID,
  SWEEP_EFFECTS,
  SWEEP_LOGIC_ID,
} from "../../machines/helpers/maintenanceIds.js";
import type { SweepResult } from "../../machines/sweep.js";
import type { RetentionResult } from "../../machines/retention.js";
import type { ContentStore, EventStore, JournalRecord, KeyStore, RecordBody } from "../../stores/types.js";
import type { RuntimeBus } from "../bus.js";
import type { Clock } from "../clock.js";
import type { LoomConfig, RetentionConfig } from "../config.js";
import type { Journal, JournalCodec } from "../journal/journal.js";
import { claimCheckTrustOf, type ClaimCheckTrust } from "./trust.js";
import { trackInflightOffloads } from "./offloads.js";

/** The cited set of one sweep: load-bearing addresses, and each telemetry address's latest citation time. */
export interface CitationIndex {
  pinned: Set<string>;
  telemetry: Map<string, number>;
  executions: number;
  unknown: boolean;
  /** Addresses in flight when the scan began: their citing append may land after the scan read its log. */
  inflightAtScan: Set<string>;
}

/** What the lifecycle keeps per app between calls. */
export interface LifecycleState {
  /** The sweep in flight: a concurrent `sweep(app)` joins it rather than racing it. */
  sweep: Promise<SweepResult> | undefined;
  /** Each sweep execution's cited set, built by its scan step and read by its reclaim batches. */
  readonly sweepIndexes: Map<string, Promise<CitationIndex>>;
  /** The erasures in flight, by subject: a concurrent call for the same subject joins the running one. */
  readonly erasures: Map<string, Promise<EraseSubjectResult>>;
  /** The retention run in flight: a concurrent `applyRetention(app)` joins it. */
  retention?: Promise<RetentionResult> | undefined;
}

/** The one port of the lifecycle modules onto the app that hosts them. */
export interface LifecycleHost {
  readonly events: EventStore;
  readonly journal: Journal;
  /** Opens sealed records and states (security.crypto); undefined when the app seals nothing. */
  readonly codec: JournalCodec | undefined;
  /** The store claim-checked blobs live in (execution.claimCheck.store, else stores.content); undefined when none is wired. */
  readonly content: ContentStore | undefined;
  /** The key stores that may hold a subject's key (security.crypto's and the app's stores), without repeats. */
  readonly keyStores: readonly KeyStore[];
  /** security.crypto's key store: the one the app's sealed records are opened with. */
  readonly sealingKeys: KeyStore | undefined;
  /** Which recorded steps may vouch for a blob (see `claimCheckTrustOf`); undefined: the position alone. */
  readonly trust: ClaimCheckTrust | undefined;
  /** compliance.erase: eraseSubject is on. */
  readonly eraseEnabled: boolean;
  /** The app's `retention` rules, applied by `applyRetention(app)` when it is given none. */
  readonly retention: RetentionConfig | undefined;
  /** Every effect id the app knows, internal ones included (the replay fold needs them). */
  readonly effectIds: ReadonlySet<string>;
  readonly bus: RuntimeBus;
  readonly clock: Clock;
  readonly state: LifecycleState;
  /** The app's logic of that id, if it knows it. */
  logicOf(logicId: string | undefined): AnyStateMachine | undefined;
  /** Every record of the execution, archived ones first, opened (`app.log`). */
  log(executionId: string): Promise<JournalRecord[]>;
  start(logic: AnyStateMachine, options: { executionId: string; input: unknown }): Promise<unknown>;
  resume(executionId: string, logic: AnyStateMachine): Promise<unknown>;
  /** The execution's output once it ends (`app.result`). */
  result(executionId: string): Promise<unknown>;
  deleteHistory(executionId: string): Promise<void>;
  /** Stops the execution if this app runs it and it has not ended; halts it when the stop fails. */
  stopRunning(executionId: string, reason: string): Promise<void>;
  /** Drops what the app holds in memory of a subject's executions (`app.forgetSubject`). */
  forgetSubject(subject: string, executionIds: readonly string[]): void;
}

/** What the app gives `createLifecycleHost`: its config, and the operations the host builds on. */
export interface LifecycleParts extends Pick<
  LifecycleHost,
  | "journal"
  | "codec"
  | "effectIds"
  | "bus"
  | "clock"
  | "logicOf"
  | "log"
  | "start"
  | "resume"
  | "result"
  | "deleteHistory"
  | "forgetSubject"
> {
  config: LoomConfig;
  /** The execution this app runs under that id, if any. */
  running(executionId: string): { readonly ended: boolean; halt(): void } | undefined;
  /** `app.stop`. */
  stop(executionId: string, reason: string): Promise<void>;
  /** Replaces the writer check derived from the config (see `LifecycleOptions`). */
  trust?: ClaimCheckTrust | undefined;
}

/** The lifecycle options of an app built over bare stores (the standalone entry points). */
export interface LifecycleOptions {
  /** The writer check to use: such an app has no claim-check config to derive it from. */
  trust?: ClaimCheckTrust;
}

// The content store a standalone sweepUnpinnedContent / eraseSubject host was given none of.
const unwired = (): never => {
  throw new TypeError("No content store is wired: pass { content } (the store execution.claimCheck writes to).");
};
/** A placeholder ContentStore for a host without one; the host's `content` reports it as undefined. */
export const UNWIRED_CONTENT: ContentStore = Object.freeze({
  spiVersion: "0.0.0",
  sealsContent: false,
  put: unwired,
  get: unwired,
  has: unwired,
  list: unwired,
});

/**
 * The app's lifecycle host, built once per app. It starts tracking the app's claim-check offloads at once
 * (see actors/lifecycle/offloads.ts), so a sweep never misses one put before it was called.
 */
export function createLifecycleHost(parts: LifecycleParts): LifecycleHost {
  const { config, running, stop, trust, ...operations } = parts;
  trackInflightOffloads(parts.bus);
  const content = config.execution?.claimCheck?.store ?? config.stores.content;
  const keyStores = [config.security?.crypto?.keys, config.stores.keys].filter((k): k is KeyStore => k !== undefined);
  return {
    ...operations,
    events: config.stores.events,
    content: content === UNWIRED_CONTENT || !content ? undefined : content,
    keyStores: [...new Set(keyStores)],
    sealingKeys: config.security?.crypto?.keys,
    trust: trust ?? claimCheckTrustOf(config),
    eraseEnabled: config.compliance?.erase === true,
    retention: config.retention,
    state: { sweep: undefined, sweepIndexes: new Map(), erasures: new Map() },
    async stopRunning(executionId, reason) {
      const live = running(executionId);
      if (!live || live.ended) return;
      await stop(executionId, reason).catch(() => live.halt());
    },
  };
}

/** The context an internal effect runs with: the host, its step, and the control-record writer. */
export interface InternalEffectContext {
  host: LifecycleHost;
  executionId: string;
  stepId: string;
  signal: AbortSignal;
  /**
   * Appends a control record (`loom.erasure.*`) to this execution's log, between two macrosteps, and
   * resolves its seq. Replay skips control records (Execution.recover), so the log stays replayable.
   */
  appendControl(record: RecordBody): Promise<number>;
  /** This execution's log so far, opened: an idempotent step looks for the control record it may already have written. */
  readOwnLog(): Promise<JournalRecord[]>;
}

/** One of the runtime's own effects (see actors/lifecycle/maintenance.ts). */
export interface InternalEffect {
  run(input: any, ctx: InternalEffectContext): Promise<unknown>;
}

const INTERNAL_LOGIC_IDS = new Set<string>([SWEEP_LOGIC_ID, ERASE_COORDINATOR_LOGIC_ID, RETENTION_LOGIC_ID]);

/** True for the runtime's own executions (sweeps, erase coordinators, retention coordinators): they cite no content and hold no subject data. */
export function isInternalLogic(logicId: string | undefined): boolean {
  return logicId !== undefined && INTERNAL_LOGIC_IDS.has(logicId);
}

/** Every internal effect's id (their code, by id, is actors/lifecycle/internalEffects.ts). */
export const INTERNAL_EFFECT_IDS: readonly string[] = Object.freeze([
  ...Object.values(SWEEP_EFFECTS),
  ...Object.values(ERASE_EFFECTS),
  ...Object.values(RETENTION_EFFECTS),
]);

export function isInternalEffect(effectId: string): boolean {
  return INTERNAL_EFFECT_IDS.includes(effectId);
}
