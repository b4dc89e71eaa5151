// createApp: the host of journaled executions over one set of stores.
import type { AnyStateMachine, InspectionEvent } from "xstate";
import { EXECUTION_ENDED, readAsJournal } from "../stores/schema.js";
import type { ExecutionInfo, JournalRecord, Stores, WriterLease } from "../stores/types.js";
import { utf8Length, sha256Hex, utf8 } from "../stores/bytes.js";
import { JournaledActor } from "./journal/actor.js";
import { createBus, type RuntimeBus, type RuntimeEvents, type Warning } from "./bus.js";
import { realClock, type Clock } from "./clock.js";
import { checkSubject, DEFAULT_SETTLED_CACHE, validateConfig, type LoomConfig } from "./config.js";
import type { ExecutionUsage } from "./effects/capabilities.js";
import { EffectRuntime, type KillSwitch } from "./effects/chain.js";
import { createReadModels, type ReadModels } from "./journal/readModels.js";
import {
  AppClosedError,
  DuplicateExecutionError,
  ExecutionFailedError,
  ExecutionStoppedError,
  UnknownEffectError,
  UnknownExecutionError,
  ConfigError,
  type SerializedError,
} from "./errors.js";
import { Execution } from "./journal/execution.js";
import { Journal } from "./journal/journal.js";
import type { PendingStep } from "./journal/planner.js";
import type { Runtime } from "./journal/host.js";
import { effectSourcesOf } from "./journal/machineInfo.js";
import { plainJson } from "./journal/json.js";
import { assertSubjectOpen, erasedExecutionError } from "./lifecycle/erasureStatus.js";
import { loopHooksOf } from "./agents/agentLoop.js";
import { resolveClaimCheck } from "./effects/claimCheck.js";
import { claimCheckLayer, validateClaimCheck } from "./effects/claimCheckPreset.js";
import { createJournalCodec, SubjectCodec } from "./journal/sealing.js";
import { controlWriterOf, INTERNAL_EFFECTS, INTERNAL_LOGICS, isInternalEffect, runInternalStep } from "./lifecycle/maintenance.js";
import { createLifecycleHost, type LifecycleHost, type LifecycleOptions } from "./lifecycle/host.js";
import { runSweep, type SweepOptions, type SweepResult } from "./lifecycle/sweep.js";
import { runErase, type EraseSubjectResult } from "./lifecycle/erase.js";
import { exportFrom, type SubjectExport } from "./lifecycle/export.js";
import { archiveExecution, HistoryInUseError, type ArchiveOptions, type ArchiveResult } from "./lifecycle/retention.js";

/** Options of `app.start`: the execution's id, its data subject and its input. */
export interface StartOptions {
  executionId: string;
  /** Whose personal data the execution holds (sealing, erasure, export). */
  subject?: string;
  input?: unknown;
}

/** `app.stats(id)`: UTF-8 bytes of the records' JSON text, and of the folded state at the log's head. */
export interface ExecutionStats {
  records: number;
  logBytes: number;
  stateBytes: number;
}

interface Outcome {
  promise: Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** What the app keeps of an ended execution (execution.settledCache of them): its journaled outcome, and its subject. */
interface SettledOutcome {
  status: string;
  output?: unknown;
  error?: SerializedError;
  subject?: string;
}

/** An app hosting journaled executions over one set of stores; build it with `createApp`. */
export class App {
  readonly stores: Stores;
  readonly bus: RuntimeBus;
  private readonly runtime: Runtime & { closed: boolean };
  private readonly executions = new Map<string, Execution>();
  private readonly actors = new WeakMap<Execution, JournaledActor>();
  private readonly outcomes = new Map<string, Outcome>();
  // Ended executions' outcomes, oldest first (a bounded LRU): an ended execution's state is not kept.
  private readonly settled = new Map<string, SettledOutcome>();
  private readonly logics = new Map<string, AnyStateMachine>();
  private readonly writers = new Map<string, WriterLease>();
  private readonly effects: EffectRuntime;
  private readonly lifecycle: LifecycleHost;
  private models: ReadModels | undefined;
  private closed = false;

  /** `lifecycleOptions`: for the standalone lifecycle entry points (actors/lifecycle/standalone.ts) only. */
  constructor(readonly config: LoomConfig, lifecycleOptions: LifecycleOptions = {}) {
    validateConfig(config);
    const claimCheck = config.execution?.claimCheck;
    if (claimCheck !== undefined) validateClaimCheck(claimCheck, config.effects, config.security?.crypto !== undefined);
    this.stores = config.stores;
    this.bus = createBus((error, event) => {
      const message = `an app.on("${event}") listener threw: ${error instanceof Error ? error.message : String(error)}`;
      if (event === "warn") reportOnce(message);
      else this.warn({ code: "LOOM_LISTENER_FAILED", message, event });
    });
    for (const logic of config.logics ?? []) {
      // A logic the app may resume must find its effects: refused here, at boot, not at the resume.
      const known = Object.keys(config.effects);
      const missing = effectSourcesOf(logic).filter((src) => !known.includes(src) && !isInternalEffect(src));
      if (missing.length) throw new ConfigError("effects", `logic "${logic.id}" (in logics) invokes ${missing.map((m) => `"${m}"`).join(", ")}, which effects does not register.`);
      this.registerLogic(logic);
    }
    // The runtime's own machines (sweep, erase coordinator), so a fresh app resumes them by logic id.
    for (const logic of INTERNAL_LOGICS) this.registerLogic(logic);
    this.effects = new EffectRuntime(config, this.bus, { clock: config.clock ?? realClock, readLog: (id) => this.log(id) });
    // security.crypto: a subject's records and snapshot states are sealed under its key (actors/journal/sealing.ts).
    if (config.security?.crypto) this.effects.codec = createJournalCodec(config.security.crypto.keys, config.stores.events);
    if (claimCheck !== undefined) {
      const onOffload = claimCheck.onOffload;
      this.effects.claimCheck = claimCheckLayer(
        {
          ...claimCheck,
          onOffload: (event) => {
            const address = event.envelope.ref.__loomContent;
            this.bus.emit("offload", { executionId: event.ctx.executionId, stepId: event.ctx.stepId, address, size: event.size });
            onOffload?.(event);
          },
        },
        config.effects,
        (error, ctx) =>
          this.warn({
            code: "LOOM_CLAIM_CHECK_ON_OFFLOAD",
            message: `execution.claimCheck.onOffload threw (the call still succeeded): ${error instanceof Error ? error.message : String(error)}`,
            executionId: ctx.executionId,
            stepId: ctx.stepId,
          }),
      );
    }
    const isClosed = () => this.closed;
    const clock: Clock = config.clock ?? realClock;
    const inspect = config.observability?.inspect;
    this.runtime = {
      journal: new Journal(config.stores.events, this.effects.codec, (warning) => this.warn(warning)),
      clock,
      bus: this.bus,
      effectIds: new Set([...Object.keys(config.effects), ...Object.keys(INTERNAL_EFFECTS)]),
      snapshotEvery: config.execution?.snapshotEvery ?? 64,
      get closed() {
        return isClosed();
      },
      // Internal effects (actors/lifecycle/maintenance.ts) bypass the effect chain; everything else runs through it.
      runStep: (execution: Execution, pending: PendingStep, signal: AbortSignal) =>
        isInternalEffect(pending.effectId)
          ? runInternalStep(this.lifecycle, { executionId: execution.executionId, pending, signal, appendControl: controlWriterOf(this.lifecycle, execution) })
          : this.effects.run(execution, pending, signal),
      executionEnded: (execution: Execution) => this.settle(execution),
      executionFailed: (execution: Execution, error: unknown) => {
        this.outcomeOf(execution.executionId).reject(error);
        void this.releaseWriter(execution.executionId);
      },
      warn: (code: string, error: unknown, facts?: Record<string, unknown>) =>
        this.warn({ code: `LOOM_${code.toUpperCase()}`, message: error instanceof Error ? error.message : String(error), ...facts }),
      inspect: (event: InspectionEvent) => {
        if (!inspect) return;
        try {
          if (typeof inspect === "function") inspect(event);
          else inspect.next?.(event);
        } catch (error) {
          this.warn({ code: "LOOM_INSPECT_FAILED", message: String(error) });
        }
      },
      actorRefOf: (execution: Execution) => this.actorOf(execution),
      afterMacrostep: (execution: Execution) => {
        const hooks = loopHooksOf(execution.machine);
        if (!hooks) return;
        const sink = this.config.observability?.onWarn;
        hooks.afterMacrostep(execution.state.snapshot, execution, sink ? (w) => this.warn(w) : undefined, (w) => this.bus.emit("warn", w));
      },
    };
    // The lifecycle modules (sweep, erase, export, retention) see the app through this port only.
    this.lifecycle = createLifecycleHost({
      config, journal: this.runtime.journal, codec: this.effects.codec, effectIds: this.runtime.effectIds, bus: this.bus, clock, trust: lifecycleOptions.trust,
      logicOf: (logicId) => (logicId === undefined ? undefined : this.logics.get(logicId)),
      running: (id) => this.executions.get(id),
      log: (id) => this.log(id), start: (logic, options) => this.start(logic, options), resume: (id, logic) => this.resume(id, logic), result: (id) => this.result(id),
      stop: (id, reason) => this.stop(id, reason), deleteHistory: (id) => this.deleteHistory(id), forgetSubject: (subject, ids) => this.forgetSubject(subject, ids),
    });
  }

  /** True when execution.claimCheck installed its layer in the effect chain (unset installs nothing, ADR 0140 D1). */
  get claimCheckInstalled(): boolean {
    return this.effects.claimCheck !== undefined;
  }

  /** The value a claim-check envelope stands for, read from execution.claimCheck.store; null once reclaimed. */
  resolveClaimCheck(envelope: unknown, options: { subject?: string } = {}): Promise<unknown> {
    const store = this.config.execution?.claimCheck?.store ?? this.stores.content;
    return resolveClaimCheck(envelope, { store, ...options });
  }

  /** Listens to the runtime's events; returns the unbind function. */
  on<E extends keyof RuntimeEvents>(event: E, listener: RuntimeEvents[E]): () => void {
    return this.bus.on(event, listener);
  }

  /** Starts a journaled execution of `logic`. Refuses an id that already has a log. */
  async start(logic: AnyStateMachine, options: StartOptions): Promise<JournaledActor> {
    this.assertOpen("start an execution");
    if (typeof options?.executionId !== "string" || options.executionId === "") {
      throw new ConfigError("start.executionId", "a non-empty string naming the execution.");
    }
    // Every refusal below comes before anything is written.
    if (options.subject !== undefined) checkSubject(options.subject, "start.subject");
    this.checkEffects(logic);
    const input = plainJson(options.input, (reason) => new ConfigError("start.input", `the input of "${options.executionId}" must be plain JSON to be journaled, but holds ${reason}.`), "input");
    loopHooksOf(logic)?.checkInput(input, options.executionId);
    if (options.subject !== undefined) await assertSubjectOpen(this.lifecycle, options.subject);
    this.registerLogic(logic);
    const { executionId } = options;
    if (this.executions.has(executionId) || (await this.stores.events.head(executionId)) > 0) throw new DuplicateExecutionError(executionId);
    const execution = new Execution(this.runtime, {
      executionId,
      machine: logic,
      machineHash: await machineHash(logic),
      ...(options.subject === undefined ? {} : { subject: options.subject }),
    });
    await this.takeWriter(executionId);
    this.executions.set(executionId, execution);
    this.outcomeOf(executionId);
    try {
      await execution.start(input);
    } catch (error) {
      this.executions.delete(executionId);
      await this.releaseWriter(executionId);
      throw error;
    }
    return this.actorOf(execution);
  }

  /** Resumes an execution from its journal: replays what is recorded (no effect re-runs) and continues. */
  async resume(executionId: string, logic?: AnyStateMachine): Promise<JournaledActor> {
    this.assertOpen("resume an execution");
    const live = this.executions.get(executionId);
    if (live && !live.failure) return this.actorOf(live);
    const { execution, info } = await this.rebuilt(executionId, logic);
    if (info.subject !== undefined) await assertSubjectOpen(this.lifecycle, info.subject, executionId);
    await this.takeWriter(executionId);
    this.executions.set(executionId, execution);
    this.outcomes.delete(executionId);
    this.outcomeOf(executionId);
    try {
      await execution.recover();
    } catch (error) {
      this.executions.delete(executionId);
      await this.releaseWriter(executionId);
      throw error;
    }
    if (execution.ended) this.settle(execution);
    return this.actorOf(execution);
  }

  /** Resolves with the execution's output when it ends; rejects if it failed or was stopped. */
  async result(executionId: string): Promise<unknown> {
    if (!this.executions.has(executionId)) {
      const settled = this.settled.get(executionId);
      if (settled) return outcomeFromRecord(executionId, settled);
      const records = await this.log(executionId);
      if (records.length === 0) throw (await erasedExecutionError(this.stores.events, executionId)) ?? new UnknownExecutionError(executionId);
      const ended = records.findLast((r) => r.type === EXECUTION_ENDED);
      if (ended) return outcomeFromRecord(executionId, ended);
      return this.resume(executionId).then(() => this.outcomeOf(executionId).promise);
    }
    return this.outcomeOf(executionId).promise;
  }

  /** Ends a running execution as stopped (journaled); its running effects are aborted. */
  async stop(executionId: string, reason = "stopped by app.stop"): Promise<void> {
    const execution = this.executions.get(executionId);
    if (!execution) {
      // Nothing runs it here: it ended (a no-op, as for a live ended one), or the app is closed.
      if (this.settled.has(executionId)) return;
      const info = await this.stores.events.getExecution(executionId);
      if (info && (info.status !== "running" || this.closed)) return;
      throw new UnknownExecutionError(executionId);
    }
    // At once: a step of this execution that has not reached its effect enters no further layer.
    this.effects.stopExecution(executionId, reason);
    await execution.stop(reason);
  }

  /**
   * The global kill switch: while engaged, every new step of every execution (and every transient call)
   * is stopped at the chain's first layer and journaled as STEP_FAILED { stoppedAt: "killSwitch" }.
   */
  get killSwitch(): KillSwitch {
    return this.effects.killSwitch;
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
    if (options.subject !== undefined) {
      try {
        checkSubject(options.subject, "invokeTransient.subject");
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.effects.invokeTransient(effectId, input, options) as Promise<O>;
  }

  /** Model usage summed over an execution's journal (model calls, tokens); counts what a resume replays too. */
  async usage(executionId: string): Promise<ExecutionUsage> {
    if (!this.executions.has(executionId) && (await this.stores.events.head(executionId)) === 0) throw new UnknownExecutionError(executionId);
    return this.effects.meter.usage(executionId);
  }

  /** Read models on @xstate/store (the execution list with status, step and usage counters), created on first use. */
  get readModels(): ReadModels {
    this.models ??= createReadModels(this);
    return this.models;
  }

  /** The effect runtime (its middleware list, the claim-check slot): for the runtime's own modules and tests. */
  get effectRuntime(): EffectRuntime {
    return this.effects;
  }

  /** Every record of the execution, archived ones first, opened where the app holds the key. */
  async log(executionId: string): Promise<JournalRecord[]> {
    const archived = (await this.stores.events.readArchives(executionId)).flatMap((segment) => segment.records);
    const opened = this.effects.codec ? await this.effects.codec.open(executionId, archived) : archived;
    return [...readAsJournal(opened), ...(await this.runtime.journal.read(executionId))];
  }

  /** Sizes for measuring: the log's records and bytes, and the folded state's bytes at the head. */
  async stats(executionId: string): Promise<ExecutionStats> {
    const records = [...(await this.stores.events.readArchives(executionId)).flatMap((s) => s.records), ...(await this.stores.events.read(executionId))];
    if (records.length === 0) throw new UnknownExecutionError(executionId);
    const logBytes = records.reduce((sum, r) => sum + utf8Length(JSON.stringify(r)), 0);
    let execution = this.executions.get(executionId);
    if (!execution) {
      // Measuring must not resume the run: rebuild its state from the journal, run nothing, take no lock.
      execution = (await this.rebuilt(executionId)).execution;
      await execution.recover({ observe: false });
    }
    return { records: records.length, logBytes, stateBytes: utf8Length(JSON.stringify(execution.persistedState())) };
  }

  /** Stops accepting work and releases timers and effects; the journal keeps everything acknowledged. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.models?.dispose();
    for (const execution of this.executions.values()) execution.halt();
    await Promise.all([...this.writers.keys()].map((id) => this.releaseWriter(id)));
    // Closing gives back what the app held per execution; app.result reads outcomes from the journal now.
    this.executions.clear();
    this.outcomes.clear();
    this.settled.clear();
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
    try {
      checkSubject(subject, "eraseSubject.subject");
    } catch (error) {
      return Promise.reject(error);
    }
    return runErase(this.lifecycle, subject);
  }

  /** A subject's executions with their records opened, and every claim-checked blob they cite resolved. */
  exportSubject(subject: string): Promise<SubjectExport> {
    this.assertOpen("export a subject");
    try {
      checkSubject(subject, "exportSubject.subject");
    } catch (error) {
      return Promise.reject(error);
    }
    return exportFrom(this.lifecycle, subject);
  }

  /**
   * Moves an execution's old live records into an archive segment, by default through its latest snapshot
   * (taking one first if needed), so a resume never reads an archived record. Segments pin what they cite.
   */
  archive(executionId: string, options: ArchiveOptions = {}): Promise<ArchiveResult> {
    this.assertOpen("archive an execution");
    return archiveExecution(this.lifecycle, executionId, options);
  }

  /**
   * Retention: deletes the execution's whole history (live log, archive segments, snapshot, catalogue
   * entry); the blobs only it cited become reclaimable by the next sweep. Refuses one running in this app.
   */
  async deleteHistory(executionId: string): Promise<void> {
    this.assertOpen("delete a history");
    const live = this.executions.get(executionId);
    if (live && !live.ended && !live.failure) throw new HistoryInUseError(executionId);
    await this.stores.events.deleteHistory(executionId);
    this.executions.delete(executionId);
    this.outcomes.delete(executionId);
    this.settled.delete(executionId);
    if (this.effects.codec instanceof SubjectCodec) this.effects.codec.forget(executionId);
    await this.releaseWriter(executionId);
  }

  /**
   * Drops what this app holds in memory of an erased subject's executions (for the erasure): their
   * state, outcomes and read-model views are the subject's data too, so app.result reads the journal.
   */
  forgetSubject(subject: string, executionIds: readonly string[]): void {
    const ids = new Set(executionIds);
    for (const [id, execution] of this.executions) if (execution.subject === subject) ids.add(id);
    for (const [id, settled] of this.settled) if (settled.subject === subject) ids.add(id);
    for (const id of ids) {
      this.executions.get(id)?.halt();
      this.executions.delete(id);
      this.outcomes.delete(id);
      this.settled.delete(id);
      if (this.effects.codec instanceof SubjectCodec) this.effects.codec.forget(id);
      void this.releaseWriter(id);
    }
    this.models?.forget([...ids]);
  }

  /** The live execution (for the runtime's own modules). */
  execution(executionId: string): Execution | undefined {
    return this.executions.get(executionId);
  }

  warn(warning: Warning): void {
    const sink = this.config.observability?.onWarn;
    this.bus.emit("warn", warning);
    if (!sink) return;
    try {
      sink(warning);
    } catch (error) {
      reportOnce(`onWarn threw: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** A new Execution of `executionId` over its journaled logic, not yet recovered nor registered. */
  private async rebuilt(executionId: string, logic?: AnyStateMachine): Promise<{ execution: Execution; info: ExecutionInfo }> {
    const info = await this.stores.events.getExecution(executionId);
    if (!info) throw (await erasedExecutionError(this.stores.events, executionId)) ?? new UnknownExecutionError(executionId);
    // A damaged journal refuses with the store's JournalCorruptionError before anything else is judged.
    if (info.damaged) await this.stores.events.read(executionId);
    const machine = logic ?? (info.logicId ? this.logics.get(info.logicId) : undefined);
    if (!machine) {
      throw new ConfigError("logics", `execution "${executionId}" runs logic "${info.logicId}", which this app does not know: pass it to app.resume(id, logic) or list it in defineConfig({ logics: [...] }).`);
    }
    this.checkEffects(machine);
    this.registerLogic(machine);
    const execution = new Execution(this.runtime, {
      executionId,
      machine,
      machineHash: await machineHash(machine),
      ...(info.subject === undefined ? {} : { subject: info.subject }),
    });
    return { execution, info };
  }

  // The stores' single-writer lock (IndexedDB: Web Locks across tabs), held while this app runs the execution.
  private async takeWriter(executionId: string): Promise<void> {
    if (!this.stores.acquireWriter || this.writers.has(executionId)) return;
    this.writers.set(executionId, await this.stores.acquireWriter(executionId));
  }

  private async releaseWriter(executionId: string): Promise<void> {
    const lease = this.writers.get(executionId);
    this.writers.delete(executionId);
    await lease?.release().catch(() => undefined);
  }

  private registerLogic(logic: AnyStateMachine): void {
    this.logics.set(logic.id, logic);
  }

  private checkEffects(logic: AnyStateMachine): void {
    if (!logic || typeof (logic as { transition?: unknown }).transition !== "function" || !("root" in logic)) {
      throw new ConfigError("start.logic", "an XState machine (setup(...).createMachine(...)) or agentLoop$(config).");
    }
    // Only the runtime's own machines may invoke its internal effects.
    const internal = INTERNAL_LOGICS.includes(logic) ? Object.keys(INTERNAL_EFFECTS) : [];
    const known = [...Object.keys(this.config.effects), ...internal];
    for (const src of effectSourcesOf(logic)) {
      if (!known.includes(src)) throw new UnknownEffectError(logic.id, src, known);
    }
  }

  private actorOf(execution: Execution): JournaledActor {
    let actor = this.actors.get(execution);
    if (!actor) {
      actor = new JournaledActor(execution, { closed: () => this.closed, warn: (warning) => this.warn(warning) });
      this.actors.set(execution, actor);
    }
    return actor;
  }

  private outcomeOf(executionId: string): Outcome {
    let outcome = this.outcomes.get(executionId);
    if (!outcome) {
      let resolve!: (value: unknown) => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<unknown>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => undefined);
      outcome = { promise, resolve, reject };
      this.outcomes.set(executionId, outcome);
    }
    return outcome;
  }

  private settle(execution: Execution): void {
    const { status, output, error } = execution.state;
    const outcome = this.outcomeOf(execution.executionId);
    if (status === "done") outcome.resolve(output);
    else if (status === "stopped") outcome.reject(new ExecutionStoppedError(execution.executionId, error?.message ?? "stopped"));
    else outcome.reject(new ExecutionFailedError(execution.executionId, error ?? { name: "Error", message: "unknown" }));
    void this.releaseWriter(execution.executionId);
    this.release(execution);
    this.bus.emit("ended", { executionId: execution.executionId, status });
  }

  // The outcome is settled: keep it (bounded, oldest evicted), drop the execution and its state.
  private release(execution: Execution): void {
    const { executionId } = execution;
    if (this.executions.get(executionId) === execution) this.executions.delete(executionId);
    this.outcomes.delete(executionId);
    this.settled.delete(executionId);
    if (this.effects.codec instanceof SubjectCodec) this.effects.codec.forget(executionId);
    const limit = this.config.execution?.settledCache ?? DEFAULT_SETTLED_CACHE;
    if (limit === 0) return;
    const { status, output, error } = execution.state;
    this.settled.set(executionId, {
      status,
      ...(output === undefined ? {} : { output }),
      ...(error === undefined ? {} : { error }),
      ...(execution.subject === undefined ? {} : { subject: execution.subject }),
    });
    for (const oldest of this.settled.keys()) {
      if (this.settled.size <= limit) break;
      this.settled.delete(oldest);
    }
  }

  private assertOpen(what: string): void {
    if (this.closed) throw new AppClosedError(what);
  }
}

function outcomeFromRecord(executionId: string, ended: JournalRecord | SettledOutcome): unknown {
  const error = ended.error as SerializedError | undefined;
  if (ended.status === "done") return ended.output;
  if (ended.status === "stopped") throw new ExecutionStoppedError(executionId, error?.message ?? "stopped");
  throw new ExecutionFailedError(executionId, error ?? { name: "Error", message: "unknown" });
}

async function machineHash(machine: AnyStateMachine): Promise<string> {
  return (await sha256Hex(utf8(JSON.stringify(machine.definition)))).slice(0, 16);
}

const reported = new Set<string>();
/** The process warning channel (console.warn in browsers), once per message. */
export function reportOnce(message: string, code = "LOOM_WARNING"): void {
  if (reported.has(message)) return;
  reported.add(message);
  const proc = (globalThis as { process?: { emitWarning?: (m: string, o: { code: string }) => void } }).process;
  if (proc?.emitWarning) proc.emitWarning(message, { code });
  else console.warn(`[${code}] ${message}`);
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
