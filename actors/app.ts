// createApp: the host of journaled executions over one set of stores.
import type { AnyStateMachine } from "xstate";
import type { JournalRecord, Stores } from "../stores/types.js";
import type { JournaledActor } from "./journal/actor.js";
import { AppHost, type AppInternals, type StartOptions } from "./appHost.js";
import type { RuntimeEvents } from "./bus.js";
import { checkSubject, validateConfig, type LoomConfig } from "./config.js";
import type { ExecutionUsage } from "./effects/capabilities.js";
import type { KillSwitch } from "./effects/chain.js";
import { createReadModels, type ReadModels } from "./journal/readModels.js";
import { StreamHub, type ExecutionStream, type StreamOptions } from "./agents/streams.js";
import { AppClosedError, checked, DuplicateExecutionError, HistoryInUseError, UnknownExecutionError } from "./errors.js";
import { RunningExecutions } from "./journal/running.js";
import { measureExecution, type ExecutionStats } from "./journal/stats.js";
import { checkReplay, type ReplayCheckOptions, type ReplayCheckReport } from "./journal/replayCheck.js";
import { migrateExecution, type MigrateOptions, type MigrateResult } from "./journal/migrate.js";
import { resolveClaimCheck } from "./effects/claimCheck.js";
import { submitStart } from "./fleet/submit.js";
import { assertSubjectOpen } from "./lifecycle/erasureStatus.js";
import { runInternalStep } from "./lifecycle/maintenance.js";
import { createLifecycleHost, type LifecycleHost, type LifecycleOptions } from "./lifecycle/host.js";
import { exportFrom, type SubjectExport } from "./lifecycle/export.js";
import { archiveExecution, type ArchiveOptions, type ArchiveResult } from "./lifecycle/retention.js";
import { runErase, runSweep, type EraseSubjectResult, type SweepOptions, type SweepResult } from "./lifecycle/joins.js";
import { resumeUnfinished, type ResumeUnfinishedOptions, type ResumeUnfinishedResult } from "./journal/unfinished.js";
import { resultFromJournal } from "./journal/result.js";

export type { AppInternals, StartOptions } from "./appHost.js";
export type { ExecutionStats, ReplayCheckOptions, ReplayCheckReport, MigrateOptions, MigrateResult };

let internalsOf: (app: App) => AppInternals & { readonly streams: StreamHub };

/** The internals of `app` (AppInternals, actors/appHost.ts, and its stream buffers): for the runtime's own tests and benchmarks only. */
export function appInternals(app: App): AppInternals & { readonly streams: StreamHub } {
  return internalsOf(app);
}

/** An app hosting journaled executions over one set of stores; build it with `createApp`. */
export class App {
  readonly stores: Stores;
  private readonly host: AppHost;
  private readonly lifecycle: LifecycleHost;
  private readonly running: RunningExecutions;
  private models: ReadModels | undefined;
  private readonly streams: StreamHub;

  /** `lifecycleOptions`: for the standalone lifecycle entry points (actors/lifecycle/standalone.ts) only. */
  constructor(readonly config: LoomConfig, lifecycleOptions: LifecycleOptions = {}) {
    validateConfig(config);
    this.stores = config.stores;
    this.host = new AppHost(config, {
      ended: (execution) => this.running.ended(execution),
      failed: (execution, error) => this.running.failed(execution, error),
      readLog: (id) => this.log(id),
      runInternalStep: (call) => runInternalStep(this.lifecycle, call),
    });
    this.streams = new StreamHub(this.host.bus, { readLog: (id) => this.log(id), exists: async (id) => this.running.has(id) || (await this.stores.events.head(id)) > 0, runsHere: (id) => this.running.has(id), isModel: (effectId) => config.effects[effectId]?.kind === "llm" });
    this.running = new RunningExecutions(config, this.host.journal.codec);
    // The lifecycle modules (sweep, erase, export, retention) see the app through this port only.
    this.lifecycle = createLifecycleHost({
      ...this.host.lifecycleParts(), config, trust: lifecycleOptions.trust,
      running: (id) => this.running.get(id),
      log: (id) => this.log(id), start: (logic, options) => this.start(logic, options), resume: (id, logic) => this.resume(id, logic), result: (id) => this.result(id),
      stop: (id, reason) => this.stop(id, reason), deleteHistory: (id) => this.deleteHistory(id), forgetSubject: (subject, ids) => this.forgetSubject(subject, ids),
    });
  }

  /** True when execution.claimCheck installed its layer in the effect chain (unset installs nothing, ADR 0140 D1). */
  get claimCheckInstalled(): boolean { return this.host.effects.claimCheck !== undefined; }

  /** The value a claim-check envelope stands for, read from execution.claimCheck.store; null once reclaimed or erased; RetainedContentMissingError for a retained blob that is gone. */
  resolveClaimCheck(envelope: unknown, options: { subject?: string } = {}): Promise<unknown> {
    const store = this.config.execution?.claimCheck?.store ?? this.stores.content;
    return resolveClaimCheck(envelope, { store, keys: this.lifecycle.keyStores, ...options });
  }

  /** Listens to the runtime's events; returns the unbind function. */
  on<E extends keyof RuntimeEvents>(event: E, listener: RuntimeEvents[E]): () => void {
    return this.host.bus.on(event, listener);
  }

  /** The execution's model deltas live and its recorded turns from the journal, indexed; resume a stream with `from` (docs/agents.md, "Streaming"). */
  stream(executionId: string, options?: StreamOptions): ExecutionStream {
    return this.streams.open(executionId, options);
  }

  /** Starts a journaled execution of `logic` (a logic id: its newest held version). Refuses an id that already has a log, or that this app starts or resumes. */
  start<TLogic extends AnyStateMachine>(logic: TLogic, options: StartOptions): Promise<JournaledActor<TLogic>>;
  start(logicId: string, options: StartOptions): Promise<JournaledActor>;
  async start(logicOrId: AnyStateMachine | string, options: StartOptions): Promise<JournaledActor> {
    this.assertOpen("start an execution");
    const logic = typeof logicOrId === "string" ? await this.host.startLogic(logicOrId) : logicOrId; // a machine: no await
    const input = this.host.checkStart(logic, options);
    if (options.subject !== undefined) await assertSubjectOpen(this.lifecycle, options.subject);
    this.host.register(logic);
    const { executionId } = options;
    return this.running.startOnce(executionId, async () => {
      if ((await this.stores.events.head(executionId)) > 0) throw new DuplicateExecutionError(executionId);
      const execution = await this.host.create(logic, executionId, options.subject);
      await this.running.admit(execution, () => execution.start(input));
      return execution.ref;
    });
  }

  /** Journals a start for the fleet without running it here (a loomwork/postgres worker runs it); idempotent by id with the same logic, subject and input (else SubmitConflictError), refused for an id this app runs. */
  async submit(logic: AnyStateMachine, options: StartOptions): Promise<void> {
    this.assertOpen("submit an execution");
    const input = this.host.checkStart(logic, options, false);
    await this.running.submitOnce(options.executionId, () => submitStart(this.host, this.stores, logic, options, input, (subject) => assertSubjectOpen(this.lifecycle, subject)));
  }

  /** Resumes an execution on the logic version it started on (else UnknownLogicVersionError, before any replay): replays, re-runs no effect, continues. A resume of an execution this app starts or resumes already joins it (the same actor). */
  resume<TLogic extends AnyStateMachine = AnyStateMachine>(executionId: string, logic?: TLogic): Promise<JournaledActor<TLogic>>;
  async resume(executionId: string, logic?: AnyStateMachine): Promise<JournaledActor> {
    this.assertOpen("resume an execution");
    return this.running.resumeOnce(executionId, async () => {
      const { execution, info } = await this.host.rebuild(executionId, logic);
      if (info.subject !== undefined) await assertSubjectOpen(this.lifecycle, info.subject, executionId);
      await this.running.admit(execution, () => execution.recover(), { fresh: true });
      if (execution.ended) this.host.ended(execution);
      return execution.ref;
    });
  }

  /** Resumes every execution the catalogue lists as running (at boot); reports those it cannot resume instead of throwing. */
  resumeUnfinished(options?: ResumeUnfinishedOptions): Promise<ResumeUnfinishedResult> {
    return resumeUnfinished(this, options);
  }

  /** Resolves with the execution's output when it ends; rejects if it failed or was stopped. */
  async result(executionId: string): Promise<unknown> {
    const here = this.running.resultHere(executionId, () => this.result(executionId)); // run, started or resumed here
    if (here) return here;
    const resumeToEnd = (id: string) => this.resume(id).then(() => this.running.outcomes.promise(id));
    return resultFromJournal({ stores: this.stores, outcomes: this.running.outcomes, log: (id) => this.log(id), resumeToEnd }, executionId);
  }

  /** Ends a running execution as stopped (journaled); its running effects are aborted. */
  async stop(executionId: string, reason = "stopped by app.stop"): Promise<void> {
    const execution = this.running.get(executionId);
    if (!execution) {
      // Nothing runs it here: it ended (a no-op, as for a live ended one), or the app is closed.
      if (this.running.outcomes.settledOf(executionId)) return;
      const info = await this.stores.events.getExecution(executionId);
      if (info && (info.status !== "running" || this.host.closed())) return;
      throw new UnknownExecutionError(executionId);
    }
    // At once: a step of this execution that has not reached its effect enters no further layer.
    this.host.effects.stopExecution(executionId, reason);
    await execution.stop(reason);
  }

  /** The global kill switch: while engaged, every new step (and transient call) stops at the chain's first layer, journaled as STEP_FAILED { stoppedAt: "killSwitch" }. */
  get killSwitch(): KillSwitch {
    return this.host.effects.killSwitch;
  }

  /**
   * Runs an effect outside any journal: never claim-checked, never recorded, outside grants and quotas;
   * the kill switch, redaction, guardRequest, retry, timeout and user middleware apply.
   *
   * @example
   * const title = await app.invokeTransient("model", { messages, tools: [] });
   */
  invokeTransient<O = unknown>(effectId: string, input: unknown, options: { signal?: AbortSignal; subject?: string } = {}): Promise<O> {
    this.assertOpen("invoke an effect");
    const { subject } = options;
    return checked(() => subject === undefined || checkSubject(subject, "invokeTransient.subject"), () => this.host.effects.invokeTransient(effectId, input, options) as Promise<O>);
  }

  /** Model usage summed over an execution's journal (model calls, tokens); counts what a resume replays too. */
  async usage(executionId: string): Promise<ExecutionUsage> {
    if (!this.running.has(executionId) && (await this.stores.events.head(executionId)) === 0) throw new UnknownExecutionError(executionId);
    return this.host.effects.meter.usage(executionId);
  }

  /** Read models on @xstate/store (the execution list with status, step and usage counters), created on first use. */
  get readModels(): ReadModels {
    this.models ??= createReadModels({
      config: this.config,
      stores: this.stores,
      on: (event, listener) => this.on(event, listener),
      log: (executionId) => this.log(executionId),
      warn: (warning) => this.host.warn(warning),
    });
    return this.models;
  }

  /** Every record of the execution, archived ones first, opened where the app holds the key. */
  log(executionId: string): Promise<JournalRecord[]> {
    return this.host.log(executionId);
  }

  /** Sizes for measuring: the log's records and bytes, and the folded state's bytes at the head. */
  stats(executionId: string): Promise<ExecutionStats> {
    return measureExecution(this.stores.events, executionId, async () => this.running.get(executionId) ?? this.host.recoverQuietly(executionId));
  }

  /**
   * Replays the stored journals of `logic`'s id against it, running nothing: per execution compatible or where it diverges (docs/upgrades.md).
   * @example
   * const { ok, results } = await app.checkReplay(flowV2, { limit: 1000 });
   */
  checkReplay(logic: AnyStateMachine, options?: ReplayCheckOptions): Promise<ReplayCheckReport> {
    return checked(() => this.host.checkEffects(logic), () => checkReplay(this.host, logic, options));
  }

  /**
   * Moves a parked execution to another version of its logic, journaled (docs/upgrades.md, "Migrating"); refuses one running here.
   * @example
   * await app.migrate("run-1", flowV2, { migrate: ({ context }) => ({ context: { ...context, tier: "free" } }) });
   */
  migrate(executionId: string, to: AnyStateMachine, options?: MigrateOptions): Promise<MigrateResult> {
    return checked(() => this.assertOpen("migrate an execution"), () => migrateExecution(this.host, this.stores, this.running.has(executionId), executionId, to, options));
  }

  /** Stops accepting work and releases timers and effects; the journal keeps everything acknowledged. */
  async close(): Promise<void> {
    if (this.host.closed()) return;
    this.host.close();
    this.models?.dispose();
    this.streams.close();
    // Closing gives back what the app held per execution; app.result reads outcomes from the journal now.
    await this.running.close();
    this.models = undefined;
  }

  /**
   * Reclaims the content blobs nothing load-bearing cites (ADR 0140 D6), as a journaled `loom.sweep:<n>`
   * execution: an unfinished sweep is resumed and finished first. Progress goes to the `progress` event.
   *
   * @example
   * const { deleted, kept } = await app.sweep({ ttlMs: 7 * 24 * 3600_000 });
   */
  sweep(options: SweepOptions): Promise<SweepResult> {
    this.assertOpen("sweep content");
    return runSweep(this.lifecycle, options);
  }

  /**
   * Erases a subject (needs `compliance: { erase: true }`): plan, journal the intent, shred the key, delete
   * the subject's blobs conditionally, journal the result, as a journaled `loom.erase:<subject>:<n>`
   * execution; a crash is finished by calling it again. Rejects with ContentCopiesRemainError before the
   * shred when the blobs could not be deleted. A repeated erase is a successful no-op.
   *
   * @example
   * const { contentDeleted } = await app.eraseSubject("user-42");
   */
  eraseSubject(subject: string): Promise<EraseSubjectResult> {
    this.assertOpen("erase a subject");
    return checked(() => checkSubject(subject, "eraseSubject.subject"), () => runErase(this.lifecycle, subject));
  }

  /** A subject's executions with their records opened, and every claim-checked blob they cite resolved. */
  exportSubject(subject: string): Promise<SubjectExport> {
    this.assertOpen("export a subject");
    return checked(() => checkSubject(subject, "exportSubject.subject"), () => exportFrom(this.lifecycle, subject));
  }

  /** Moves an execution's old live records into an archive segment, by default through its latest snapshot (taking one first if needed): a resume never reads an archived record; segments pin what they cite. */
  archive(executionId: string, options: ArchiveOptions = {}): Promise<ArchiveResult> {
    this.assertOpen("archive an execution");
    return archiveExecution(this.lifecycle, executionId, options);
  }

  /** Retention: deletes the execution's whole history (log, segments, snapshot, catalogue entry); refuses one running here. The blobs only it cited become reclaimable. */
  async deleteHistory(executionId: string): Promise<void> {
    this.assertOpen("delete a history");
    const live = this.running.get(executionId);
    if (live && !live.ended && !live.failure) throw new HistoryInUseError(executionId);
    await this.stores.events.deleteHistory(executionId);
    await this.running.forget(executionId);
  }

  /** Drops what this app holds of an erased subject's executions (state, outcomes, stream tapes, views: its data too), read models or not: app.result reads the journal. */
  private forgetSubject(subject: string, executionIds: readonly string[]): void {
    const forgotten = this.running.forgetSubject(subject, executionIds);
    this.streams.forget(forgotten);
    this.models?.forget(forgotten);
  }

  static {
    internalsOf = (app) => ({ effects: app.host.effects, execution: (id) => app.running.get(id), streams: app.streams });
  }

  private assertOpen(what: string): void {
    if (this.host.closed()) throw new AppClosedError(what);
  }
}

/**
 * Creates an app over the configured stores; validates the whole config first.
 *
 * @example
 * const app = createApp(defineConfig({ stores: memoryStores(), effects: { search } }));
 * const actor = await app.start(machine, { executionId: "run-1", input });
 */
export function createApp(config: LoomConfig): App {
  return new App(config);
}
