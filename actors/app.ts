// createApp: the host of journaled executions over one set of stores.
import type { AnyStateMachine } from "xstate";
import type { ExecutionInfo, JournalRecord, Stores } from "../stores/types.js";
import { candidates, checkExecutionsQuery, selectExecutions, type ExecutionsQuery } from "./journal/executionsQuery.js";
import type { JournaledActor } from "./journal/actor.js";
import { AppHost, type AppInternals } from "./appHost.js";
import type { StartOptions } from "./logics.js";
import type { RuntimeEvents, Warning } from "./bus.js";
import { checkSubject, DEFAULT_CHILDREN_LIMITS, validateConfig, type LoomConfig } from "./config.js";
import { WARNING_CODES } from "./constants.js";
import type { ExecutionUsage, TreeUsage } from "./effects/capabilities.js";
import type { KillSwitch } from "./effects/chain.js";
import { StreamHub, type ExecutionStream, type StreamOptions } from "./agents/streams.js";
import {
  AppClosedError,
  checked,
  DuplicateExecutionError,
  HistoryInUseError,
  LifecycleNotLoadedError,
  UnknownExecutionError,
} from "./errors.js";
import type { StepCall } from "./journal/host.js";
import { RunningExecutions } from "./journal/running.js";
import { measureExecution, type ExecutionStats } from "./journal/stats.js";
import { resolveClaimCheck } from "./effects/claimCheck.js";
import { submitStart, type SubmitOptions } from "./fleet/submit.js";
import { placementOf } from "./fleet/queues.js";
import { assertSubjectOpen } from "./lifecycle/erasureStatus.js";
import { createLifecycleHost, type LifecycleHost, type LifecycleOptions } from "./lifecycle/host.js";
import { resumeUnfinished, type ResumeUnfinishedOptions, type ResumeUnfinishedResult } from "./journal/unfinished.js";
import { resultFromJournal } from "./journal/result.js";
import { ExecutionTree } from "./journal/tree.js";
import { routeApproval, type ApprovalRoute } from "./agents/approvals.js";
import type { ParentLink } from "./journal/children.js";

export type { AppInternals } from "./appHost.js";
export type { StartOptions } from "./logics.js";
export type { SubmitOptions } from "./fleet/submit.js";
export type { ExecutionStats };

/**
 * The one internal port of an app: what the role entries (loomwork/lifecycle, loomwork/upgrades,
 * loomwork/read-models) and the runtime's own tests and benchmarks reach inside it for. Not public API.
 */
export interface AppPort extends AppInternals {
  readonly streams: StreamHub;
  readonly host: AppHost;
  readonly lifecycle: LifecycleHost;
  /** Throws AppClosedError naming `what` once the app is closed. */
  assertOpen(what: string): void;
  /** True while this app starts, runs or resumes the execution. */
  runsHere(executionId: string): boolean;
  /** Registers the runtime's own machines (sweep, erase coordinator) and their steps on the app, once (loomwork/lifecycle passes them: the app does not import them). */
  maintenance(role: MaintenanceRole): void;
  /** To the bus's `warn` listeners and observability.onWarn. */
  warn(warning: Warning): void;
  /** Marks the app as a fleet worker's (loomwork/postgres createWorker): its child executions are submitted to the fleet, its tree's messages and stops go through the inbox. */
  fleetWorker(): void;
  /**
   * A fleet worker's resume of an execution it claimed; `firstClaim` (the lease's first epoch): the custom actions of
   * the submitted first macrostep run now, once (the submitter planned it and ran nothing).
   */
  resumeClaimed(executionId: string, firstClaim: boolean): Promise<JournaledActor>;
  /**
   * A fleet worker gives an execution up without journaling anything (it parked it): halted, its outcome rejected
   * with `reason`, and nothing of it kept here (a long-lived worker held every execution it ever parked).
   */
  letGo(executionId: string, reason: Error): void;
  /** Hears which executions the app dropped for an erased subject (read models drop their views); returns the unbind function. */
  onForget(listener: (executionIds: readonly string[]) => void): () => void;
  /** Hears the app's close, once, before its executions are released (loomwork/schedules stops firing); returns the unbind function. */
  onClose(listener: () => void): () => void;
}

/** What loomwork/lifecycle hands an app when first called on it: the runtime's own machines and how their steps run. */
export interface MaintenanceRole {
  readonly logics: readonly AnyStateMachine[];
  runStep(host: LifecycleHost, call: StepCall): Promise<unknown>;
}

let internalsOf: (app: App) => AppPort;

/** The internal port of `app` (AppPort): for the role entries and the runtime's own tests and benchmarks only. */
export function appInternals(app: App): AppPort {
  return internalsOf(app);
}

/** An app hosting journaled executions over one set of stores; build it with `createApp`. */
export class App {
  readonly stores: Stores;
  private readonly host: AppHost;
  private readonly lifecycle: LifecycleHost;
  private readonly running: RunningExecutions;
  private readonly streams: StreamHub;
  private readonly tree: ExecutionTree;
  private readonly forgetListeners = new Set<(executionIds: readonly string[]) => void>();
  private readonly closeListeners = new Set<() => void>();
  private maintained: MaintenanceRole | undefined;
  private onFleet = false; // a fleet worker's app (fleetWorker): its children are the fleet's

  /** `lifecycleOptions`: for the standalone lifecycle entry points (actors/lifecycle/standalone.ts) only. */
  constructor(
    readonly config: LoomConfig,
    lifecycleOptions: LifecycleOptions = {},
  ) {
    validateConfig(config);
    this.stores = config.stores;
    this.host = new AppHost(config, {
      ended: (execution) => this.running.ended(execution),
      failed: (execution, error) => this.running.failed(execution, error),
      readLog: (id) => this.log(id),
      runInternalStep: (call) =>
        this.maintained
          ? this.maintained.runStep(this.lifecycle, call)
          : Promise.reject(new LifecycleNotLoadedError(call.executionId)),
      requireMaintenance: (id) => {
        if (!this.maintained) throw new LifecycleNotLoadedError(id);
      },
      runChild: (call) => this.tree.runChild(call),
      deliver: (message, from) => this.tree.deliver(message, from),
      sendLive: (address, event) => this.tree.sendLive(address, event),
      stopChild: (id, reason) => this.tree.stopChild(id, reason),
      childSettled: (id) => this.tree.settled(id),
      routeApproval: (id, decision) => routeApproval(this.approvalRoute(), id, decision),
    });
    this.tree = new ExecutionTree({
      events: config.stores.events,
      running: (id) => this.running.get(id),
      logicOf: (id) => this.host.logics.logicOf(id),
      start: (logic, options, links) => this.startChecked(logic, options, links),
      submit: (logic, options, links) => this.submitChecked(logic, options, links),
      fleet: () => (this.onFleet ? this.stores.fleet : undefined),
      recoverQuietly: (id) => this.host.recoverQuietly(id),
      resume: (id, logic) => this.resume(id, logic),
      result: (id) => this.result(id),
      stop: (id, reason) => this.stop(id, reason),
      closed: () => this.host.closed(),
      maxDepth: config.execution?.children?.maxDepth ?? DEFAULT_CHILDREN_LIMITS.maxDepth,
    });
    this.streams = new StreamHub(this.host.bus, {
      readLog: (id) => this.log(id),
      exists: async (id) => this.running.has(id) || (await this.stores.events.head(id)) > 0,
      runsHere: (id) => this.running.has(id),
      isModel: (effectId) => (config.effects[effectId] ? config.effects[effectId].kind === "llm" : undefined),
      // Issue 34: a stream of a lead carries its sub-agents' parts.
      children: async (id) => (await this.executions({ root: id })).filter((info) => info.executionId !== id),
      feed: config.stores.streams,
    });
    // What runs here streams to the other processes on these stores (a web server following a worker's run).
    config.stores.streams?.attach(this.host.bus);
    this.running = new RunningExecutions(config, this.host.journal.codec);
    // The lifecycle modules (sweep, erase, export, retention) see the app through this port only.
    this.lifecycle = createLifecycleHost({
      journal: this.host.journal,
      codec: this.host.journal.codec,
      effectIds: this.host.effectIds,
      bus: this.host.bus,
      clock: this.host.clock,
      logicOf: (id) => this.host.logics.logicOf(id),
      config,
      trust: lifecycleOptions.trust,
      running: (id) => this.running.get(id),
      log: (id) => this.log(id),
      start: (logic, options) => this.start(logic, options),
      resume: (id, logic) => this.resume(id, logic),
      result: (id) => this.result(id),
      stop: (id, reason) => this.stop(id, reason),
      deleteHistory: (id) => this.deleteHistory(id),
      forgetSubject: (subject, ids) => this.forgetSubject(subject, ids),
    });
  }

  /** True when execution.claimCheck installed its layer in the effect chain (unset installs nothing, ADR 0140 D1). */
  get claimCheckInstalled(): boolean {
    return this.host.effects.claimCheck !== undefined;
  }

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
    const logic = typeof logicOrId === "string" ? this.host.logics.startLogic(logicOrId) : logicOrId; // a machine: no await
    return this.startChecked(logic, options);
  }

  // A start (a child's names its parent and root): checked, then journaled once per id.
  private async startChecked(
    logic: AnyStateMachine,
    options: StartOptions,
    links?: { parent: ParentLink; root: string },
  ): Promise<JournaledActor> {
    const input = this.host.logics.checkStart(logic, options);
    if (options.subject !== undefined) await assertSubjectOpen(this.lifecycle, options.subject);
    this.host.logics.register(logic);
    const { executionId } = options;
    return this.running.startOnce(executionId, async () => {
      if ((await this.stores.events.head(executionId)) > 0) throw new DuplicateExecutionError(executionId);
      const execution = await this.host.create(logic, executionId, options.subject);
      await this.running.admit(execution, () => execution.start(input, links));
      return execution.ref;
    });
  }

  /** Journals a start for the fleet without running it here (a loomwork/postgres worker runs it); idempotent by id with the same logic, subject and input (else SubmitConflictError), refused for an id this app runs. */
  async submit(logic: AnyStateMachine, options: SubmitOptions): Promise<void> {
    this.assertOpen("submit an execution");
    await this.submitChecked(logic, options);
  }

  // A submit (a child's, on a fleet worker, names its parent and root).
  private async submitChecked(
    logic: AnyStateMachine,
    options: SubmitOptions,
    links?: { parent: ParentLink; root: string },
  ): Promise<void> {
    const placement = placementOf(this.config.queues, options);
    const input = this.host.logics.checkStart(logic, options, false);
    await this.running.submitOnce(options.executionId, () =>
      submitStart(
        this.host,
        this.stores,
        logic,
        options,
        input,
        (subject) => assertSubjectOpen(this.lifecycle, subject),
        links,
        placement,
      ),
    );
  }

  /** Resumes an execution on the logic version it started on (else UnknownLogicVersionError, before any replay): replays, re-runs no effect, continues. A resume of an execution this app starts or resumes already joins it (the same actor). */
  resume<TLogic extends AnyStateMachine = AnyStateMachine>(
    executionId: string,
    logic?: TLogic,
  ): Promise<JournaledActor<TLogic>>;
  async resume(executionId: string, logic?: AnyStateMachine): Promise<JournaledActor> {
    return this.resumeWith(executionId, logic, {});
  }

  // A resume; `firstRun`: a fleet worker's first claim of a submitted execution, whose first macrostep (planned by the
  // submitter, which runs nothing) has its custom actions run now, once.
  private async resumeWith(
    executionId: string,
    logic: AnyStateMachine | undefined,
    options: { firstRun?: boolean },
  ): Promise<JournaledActor> {
    this.assertOpen("resume an execution");
    return this.running.resumeOnce(executionId, async () => {
      const { execution, info } = await this.host.rebuild(executionId, logic);
      if (info.subject !== undefined) await assertSubjectOpen(this.lifecycle, info.subject, executionId);
      await this.running.admit(execution, () => execution.recover(options), { fresh: true });
      if (execution.ended) this.host.ended(execution);
      else await this.tree.stopOrphan(execution);
      return execution.ref;
    });
  }

  // Issue 34: where a decision sent to an execution of a tree goes when a child execution waits for the call. On the
  // fleet, a child this worker does not hold gets it through its inbox (its worker checks it, in its turn).
  private approvalRoute(): ApprovalRoute {
    return {
      tree: (id) => this.executions({ root: id }),
      log: (id) => this.log(id),
      isModel: (effectId) => this.config.effects[effectId]?.kind === "llm",
      deliver: async (id, decision) => {
        const fleet = this.onFleet ? this.stores.fleet : undefined;
        if (fleet?.message && !this.running.has(id)) return fleet.message(id, { event: decision, live: true });
        await (this.running.get(id)?.ref ?? (await this.resume(id))).sendAsync(decision);
      },
    };
  }

  /** Resumes every execution the catalogue lists as running (at boot); reports those it cannot resume instead of throwing. */
  resumeUnfinished(options?: ResumeUnfinishedOptions): Promise<ResumeUnfinishedResult> {
    return resumeUnfinished(
      () => this.stores.events.listExecutions(),
      (id) => this.resume(id),
      options,
    );
  }

  /** Resolves with the execution's output when it ends; rejects if it failed or was stopped. */
  async result(executionId: string): Promise<unknown> {
    const here = this.running.resultHere(executionId, () => this.result(executionId)); // run, started or resumed here
    if (here) return here;
    const resumeToEnd = (id: string) => this.resume(id).then(() => this.running.outcomes.promise(id));
    return resultFromJournal(
      { stores: this.stores, outcomes: this.running.outcomes, log: (id) => this.log(id), resumeToEnd },
      executionId,
    );
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
  invokeTransient<O = unknown>(
    effectId: string,
    input: unknown,
    options: { signal?: AbortSignal; subject?: string } = {},
  ): Promise<O> {
    this.assertOpen("invoke an effect");
    const { subject } = options;
    return checked(
      () => subject === undefined || checkSubject(subject, "invokeTransient.subject"),
      () => this.host.effects.invokeTransient(effectId, input, options) as Promise<O>,
    );
  }

  /**
   * Model usage summed over an execution's journal (model calls, tokens); counts what a resume replays too. An
   * execution with child executions (sub-agents) gets its tree's totals, with each execution's own in `byExecution`.
   */
  async usage(executionId: string): Promise<TreeUsage> {
    if (!this.running.has(executionId) && (await this.stores.events.head(executionId)) === 0)
      throw new UnknownExecutionError(executionId);
    const meter = this.host.effects.meter;
    const own = await meter.usage(executionId);
    const below = (await this.executions({ root: executionId })).filter((info) => info.executionId !== executionId);
    if (below.length === 0) return own;
    const byExecution: Record<string, ExecutionUsage> = { [executionId]: own };
    const total: TreeUsage = { ...own };
    for (const { executionId: id } of below) {
      const usage = await meter.usage(id);
      byExecution[id] = usage;
      total.modelCalls += usage.modelCalls;
      total.inputTokens += usage.inputTokens;
      total.outputTokens += usage.outputTokens;
      total.totalTokens += usage.totalTokens;
    }
    return { ...total, byExecution };
  }

  /**
   * The catalogue's executions, ordered by id: every one, or those a query selects (`{ root }`: the tree under an
   * execution, its child executions at any depth; `subject`, `status`). Read from the stores: executions other apps
   * run on them too.
   */
  async executions(query: ExecutionsQuery = {}): Promise<ExecutionInfo[]> {
    checkExecutionsQuery(query);
    return selectExecutions(await candidates(this.stores.events, query), query);
  }

  /** Every record of the execution, archived ones first, opened where the app holds the key. */
  log(executionId: string): Promise<JournalRecord[]> {
    return this.host.log(executionId);
  }

  /** Sizes for measuring: the log's records and bytes, and the folded state's bytes at the head. */
  stats(executionId: string): Promise<ExecutionStats> {
    return measureExecution(
      this.stores.events,
      executionId,
      async () => this.running.get(executionId) ?? this.host.recoverQuietly(executionId),
    );
  }

  /** Stops accepting work and releases timers and effects; the journal keeps everything acknowledged. */
  async close(): Promise<void> {
    if (this.host.closed()) return;
    this.host.close();
    for (const listener of [...this.closeListeners]) listener();
    this.closeListeners.clear();
    this.streams.close();
    // Closing gives back what the app held per execution; app.result reads outcomes from the journal now.
    await this.running.close();
    // Then what the effects hold (an MCP server's connection): each distinct close once.
    const closes = new Set(
      Object.values(this.config.effects).flatMap((effect) => (effect.close ? [effect.close] : [])),
    );
    for (const close of closes) {
      try {
        await close();
      } catch (error) {
        this.host.warn({ code: WARNING_CODES.effectClose, message: String(error) });
      }
    }
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
    // The deltas the stores carry between processes are the subject's data too (their age limit is the floor).
    this.stores.streams?.forget?.(executionIds).catch(() => undefined);
    for (const listener of this.forgetListeners) listener(forgotten);
  }

  private maintenance(role: MaintenanceRole): void {
    if (this.maintained) return;
    this.maintained = role;
    this.host.logics.registerInternal(role.logics);
  }

  static {
    internalsOf = (app) => ({
      effects: app.host.effects,
      execution: (id) => app.running.get(id),
      letGo: (id, reason) => {
        const execution = app.running.get(id);
        if (!execution) return;
        execution.letGo(reason);
        // Its outcome rejected (a waiting app.result returns); then nothing of it is held here any more.
        void app.running.forget(id);
      },
      streams: app.streams,
      host: app.host,
      lifecycle: app.lifecycle,
      assertOpen: (what) => app.assertOpen(what),
      runsHere: (id) => app.running.has(id),
      maintenance: (role) => app.maintenance(role),
      warn: (warning) => app.host.warn(warning),
      fleetWorker: () => void (app.onFleet = true),
      resumeClaimed: (executionId, firstClaim) => app.resumeWith(executionId, undefined, { firstRun: firstClaim }),
      onForget: (listener) => {
        app.forgetListeners.add(listener);
        return () => app.forgetListeners.delete(listener);
      },
      onClose: (listener) => {
        app.closeListeners.add(listener);
        return () => app.closeListeners.delete(listener);
      },
    });
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
