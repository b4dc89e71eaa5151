// The app's side of the ExecutionHost port (actors/journal/host.ts): the journal, clock and bus its
// executions run on, the step runner (the effect chain, or the runtime's internal steps), the inspector,
// the warning sink, and the logics it knows. The App keeps the executions; this builds and serves them.
import type { AnyStateMachine, InspectionEvent } from "xstate";
import type { ExecutionInfo, JournalRecord } from "../stores/types.js";
import { EXECUTION_STARTED } from "../stores/schema.js";
import type { RuntimeBus } from "./bus.js";
import { realClock, type Clock } from "./clock.js";
import { checkSubject, type LoomConfig } from "./config.js";
import { WARNING_CODES } from "./constants.js";
import { appBus, type WarningSink } from "./warnings.js";
import { EffectRuntime } from "./effects/runtime.js";
import { validateClaimCheck } from "./effects/claimCheckConfig.js";
import { ConfigError, UnknownEffectError, UnknownExecutionError } from "./errors.js";
import { Execution } from "./journal/execution.js";
import { declarationOf } from "./logicDeclaration.js";
import type { ExecutionHost, HostedExecution, MacrostepObserver, StepCall } from "./journal/host.js";
import { Journal } from "./journal/journal.js";
import { plainJson } from "./journal/json.js";
import { effectSourcesOf } from "./journal/machineInfo.js";
import { SubjectCodec } from "./journal/sealing.js";
import { LogicVersions, machineHashOf, versionOption, type StartedLogic } from "./journal/versions.js";
import { appClaimCheckLayer } from "./effects/claimCheckPreset.js";
import { erasedExecutionError } from "./lifecycle/erasureStatus.js";
import { INTERNAL_EFFECT_IDS, isInternalEffect, isInternalLogic } from "./lifecycle/host.js";

/** Options of `app.start`: the execution's id, its data subject and its input. */
export interface StartOptions {
  /** The new execution's id, unique in the stores: a start refuses an id that already has a log. */
  executionId: string;
  /** Whose personal data the execution holds (sealing, erasure, export). */
  subject?: string;
  /** The machine's `input`; journaled, so it must be plain JSON. */
  input?: unknown;
}

/**
 * What the runtime's own tests and benchmarks reach inside an app for, through `appInternals(app)`
 * (actors/app.ts); not public API, index.ts does not export it: the effect chain (its claim-check
 * slot), and a live execution.
 */
export interface AppInternals {
  readonly effects: EffectRuntime;
  execution(executionId: string): Execution | undefined;
}

/** What the host asks of the app that owns the executions. */
export interface AppHostOwner {
  ended(execution: HostedExecution): void;
  failed(execution: HostedExecution, error: unknown): void;
  /** Every record of an execution, opened (quotas and usage count from it). */
  readLog(executionId: string): Promise<JournalRecord[]>;
  /** Runs one of the runtime's internal steps (actors/lifecycle/maintenance.ts), outside the effect chain. */
  runInternalStep(call: StepCall): Promise<unknown>;
  /** Throws LifecycleNotLoadedError naming `id` unless loomwork/lifecycle registered the runtime's own machines (`registerInternal`): before one of their executions is rebuilt or started by id. */
  requireMaintenance(id: string): void;
}

export class AppHost implements ExecutionHost {
  readonly bus: RuntimeBus;
  /** The app's one warning sink: the bus's "warn" event, then observability.onWarn (./warnings.ts). */
  readonly warn: WarningSink;
  readonly clock: Clock;
  readonly journal: Journal;
  /** The effect chain every step but an internal one runs through. */
  readonly effects: EffectRuntime;
  readonly effectIds: ReadonlySet<string>;
  readonly snapshotEvery: number | false;
  /** The logics it knows, several versions per id (actors/journal/versions.ts). */
  readonly logics = new LogicVersions();
  private isClosed = false;
  private readonly effectsChecked = new WeakSet<AnyStateMachine>(); // logics whose invoked effects checkEffects found registered
  private readonly internalMachines = new WeakSet<AnyStateMachine>(); // the runtime's own machines, once registered

  constructor(
    private readonly config: LoomConfig,
    private readonly owner: AppHostOwner,
  ) {
    const claimCheck = config.execution?.claimCheck;
    if (claimCheck !== undefined) validateClaimCheck(claimCheck, config.effects, config.security?.crypto !== undefined);
    // The one warning path (./warnings.ts): everything below reports through `this.warn`.
    ({ bus: this.bus, warn: this.warn } = appBus(config.observability?.onWarn));
    for (const logic of config.logics ?? []) {
      // A logic the app may resume must find its effects: refused here, at boot, not at the resume.
      const known = Object.keys(config.effects);
      const missing = effectSourcesOf(logic).filter((src) => !known.includes(src) && !isInternalEffect(src));
      if (missing.length) throw new ConfigError("effects", `logic "${logic.id}" (in logics) invokes ${missing.map((m) => `"${m}"`).join(", ")}, which effects does not register.`);
    }
    this.logics.registerAll(config.logics ?? []);
    this.clock = config.clock ?? realClock;
    const { warn } = this;
    const layer = claimCheck && appClaimCheckLayer(claimCheck, config.effects, this.bus, warn);
    this.effects = new EffectRuntime(config, this.bus, { clock: this.clock, readLog: (id) => owner.readLog(id), warn, ...(layer ? { claimCheck: layer } : {}) });
    // security.crypto: a subject's records and snapshot states are sealed under its key (actors/journal/sealing.ts).
    const codec = config.security?.crypto ? new SubjectCodec(config.security.crypto.keys, config.stores.events) : undefined;
    this.journal = new Journal(config.stores.events, codec, warn);
    this.effectIds = new Set([...Object.keys(config.effects), ...INTERNAL_EFFECT_IDS]);
    this.snapshotEvery = config.execution?.snapshotEvery ?? 64;
  }

  /** The runtime's own machines (sweep, erase coordinator): registered by the first lifecycle function called on the app (loomwork/lifecycle), so it resumes or starts them by id. */
  registerInternal(logics: readonly AnyStateMachine[]): void {
    this.logics.registerAll(logics);
    for (const logic of logics) this.internalMachines.add(logic);
  }

  closed(): boolean {
    return this.isClosed;
  }

  /** From now on every execution drops its queued work and refuses sends (`app.close`). */
  close(): void {
    this.isClosed = true;
  }

  // Internal effects (actors/lifecycle/internalEffects.ts) bypass the effect chain; everything else runs through it.
  runStep(call: StepCall): Promise<unknown> {
    return isInternalEffect(call.pending.effectId) ? this.owner.runInternalStep(call) : this.effects.run(call);
  }

  ended(execution: HostedExecution): void {
    this.owner.ended(execution);
    this.bus.emit("ended", { executionId: execution.executionId, status: execution.state.status });
  }

  failed(execution: HostedExecution, error: unknown): void {
    this.owner.failed(execution, error);
  }

  get inspecting(): boolean {
    return this.config.observability?.inspect !== undefined;
  }

  inspect(...events: InspectionEvent[]): void {
    const inspect = this.config.observability?.inspect;
    if (!inspect) return;
    for (const event of events) {
      try {
        if (typeof inspect === "function") inspect(event);
        else inspect.next?.(event);
      } catch (error) {
        this.warn({ code: WARNING_CODES.inspectFailed, message: String(error) });
      }
    }
  }

  /**
   * The refusals of `app.start` that need no store, before anything is written: the id, the subject, the
   * logic's effects, and an input that is not plain JSON or not one the logic declares it takes. Returns the input as journaled.
   */
  checkStart(logic: AnyStateMachine, options: StartOptions, runsHere = true): unknown {
    if (typeof options?.executionId !== "string" || options.executionId === "") {
      throw new ConfigError("start.executionId", "a non-empty string naming the execution.");
    }
    if (options.subject !== undefined) checkSubject(options.subject, "start.subject");
    this.checkEffects(logic, runsHere);
    const input = plainJson(options.input, (reason) => new ConfigError("start.input", `the input of "${options.executionId}" must be plain JSON to be journaled, but holds ${reason}.`), "input");
    declarationOf(logic)?.checkInput?.(input, options.executionId);
    return input;
  }

  /** The logic `app.start` runs: the one given, or the newest held version of a logic id. */
  async startLogic(logicOrId: AnyStateMachine | string): Promise<AnyStateMachine> {
    if (typeof logicOrId !== "string") return logicOrId;
    if (isInternalLogic(logicOrId)) this.owner.requireMaintenance(logicOrId);
    const logic = this.logics.newest(logicOrId);
    if (!logic) throw new ConfigError("start.logic", `no logic "${logicOrId}" is listed in defineConfig({ logics: [...] }): list it, or pass the machine itself.`);
    return logic;
  }

  /**
   * A new Execution of `machine` on this host, with its logic's macrostep observer; not started nor recovered.
   * `journaled`: the identity its EXECUTION_STARTED holds (a rebuild), so the definition is not hashed again.
   */
  async create(machine: AnyStateMachine, executionId: string, subject: string | undefined, journaled?: StartedLogic): Promise<Execution> {
    const identity = journaled?.machineHash === undefined ? { machineHash: await machineHashOf(machine), ...versionOption(machine) } : { machineHash: journaled.machineHash, ...(journaled.version === undefined ? {} : { version: journaled.version }) };
    return new Execution(this, {
      executionId,
      machine,
      identity,
      ...(subject === undefined ? {} : { subject }),
      observer: this.observerOf(machine),
    });
  }

  /** A new Execution of `executionId` over its journaled logic (or `logic`), not yet recovered nor registered. */
  async rebuild(executionId: string, logic?: AnyStateMachine): Promise<{ execution: Execution; info: ExecutionInfo }> {
    const events = this.config.stores.events;
    const info = await events.getExecution(executionId);
    if (!info) throw (await erasedExecutionError(events, executionId)) ?? new UnknownExecutionError(executionId);
    // A damaged journal refuses with the store's JournalCorruptionError before anything else is judged.
    if (info.damaged) await events.read(executionId);
    // The version is judged before any record is replayed: a pinned execution whose version is not held is refused here.
    const started = await this.startedLogic(info);
    if (isInternalLogic(started?.logicId)) this.owner.requireMaintenance(executionId);
    const machine = started ? await this.logics.resolve(executionId, started, logic) : logic;
    if (!machine) {
      throw new ConfigError("logics", `execution "${executionId}" runs logic "${info.logicId}", which this app does not know: pass it to app.resume(id, logic) or list it in defineConfig({ logics: [...] }).`);
    }
    this.checkEffects(machine);
    this.register(machine);
    // Its identity is what its start journaled (a resume never journals one): the definition is hashed only to choose between versions.
    return { execution: await this.create(machine, executionId, info.subject, started), info };
  }

  /** Every record of the execution, archived ones first, opened where the app holds the key. */
  async log(executionId: string): Promise<JournalRecord[]> {
    return this.journal.readLog(executionId);
  }

  /** The execution's state rebuilt from the journal without resuming it: nothing runs, no lock is taken (app.stats). */
  async recoverQuietly(executionId: string): Promise<Execution> {
    const { execution } = await this.rebuild(executionId);
    await execution.recover({ observe: false });
    return execution;
  }

  register(logic: AnyStateMachine): void {
    this.logics.register(logic);
  }

  /** The newest held definition of `logicId` (what a start by id runs, and what the lifecycle modules use). */
  logicOf(logicId: string | undefined): AnyStateMachine | undefined {
    return this.logics.newest(logicId);
  }

  // What EXECUTION_STARTED says of the logic: from the catalogue, or (an entry an older release folded, without
  // the hash) from the record itself; undefined for a log whose first record is not a start.
  private async startedLogic(info: ExecutionInfo): Promise<StartedLogic | undefined> {
    if (info.logicId !== undefined && info.machineHash !== undefined) {
      return { logicId: info.logicId, machineHash: info.machineHash, ...(info.version === undefined ? {} : { version: info.version }) };
    }
    const [first] = await this.journal.readForReplay(info.executionId, 1);
    if (first?.type !== EXECUTION_STARTED) return info.logicId === undefined ? undefined : { logicId: info.logicId };
    return { logicId: first.logicId, machineHash: first.machineHash, ...(typeof first.version === "string" ? { version: first.version } : {}) };
  }

  /** Refuses what is not a machine, and (unless it runs elsewhere: app.submit) one invoking an effect this app does not register. */
  checkEffects(logic: AnyStateMachine, runsHere = true): void {
    // The caller's value is untrusted (plain JavaScript may pass anything): checked as unknown.
    const value: unknown = logic;
    if (!value || (typeof value !== "object" && typeof value !== "function") || !("transition" in value) || typeof value.transition !== "function" || !("root" in value)) {
      throw new ConfigError("start.logic", "an XState machine (setup(...).createMachine(...)) or agentLoop$(config).");
    }
    // A definition is immutable and the effects are the config's: one that passed is not walked again at every start.
    if (!runsHere || this.effectsChecked.has(logic)) return;
    const internal = this.internalMachines.has(logic) ? INTERNAL_EFFECT_IDS : [];
    const known = [...Object.keys(this.config.effects), ...internal]; // only the runtime's own machines may invoke its internal effects
    for (const src of effectSourcesOf(logic)) if (!known.includes(src)) throw new UnknownEffectError(logic.id, src, known);
    this.effectsChecked.add(logic);
  }

  // What the logic declared to run after each macrostep (agentLoop$: its warnings), bound once per execution to this app's warning sink.
  private observerOf(machine: AnyStateMachine): MacrostepObserver | undefined {
    const declared = declarationOf(machine);
    const after = declared?.afterMacrostep;
    if (!after) return undefined;
    const { warn } = this;
    return (snapshot, run) => after.call(declared, snapshot, run, warn);
  }
}
