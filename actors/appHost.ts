// Where an app's executions run: its side of the ExecutionHost port (actors/journal/host.ts). The journal,
// clock and bus they run on, the step runner (the effect chain, or the runtime's internal steps), the
// inspector and the warning sink; and it builds them, new (a start) or from the journal (a resume). What
// may run is the logics' part (./logics.ts); what runs now is the running set's (journal/running.ts).
import type { AnyStateMachine, EventObject, InspectionEvent } from "xstate";
import type { ExecutionInfo, JournalRecord } from "../stores/types.js";
import type { RuntimeBus } from "./bus.js";
import { realClock, type Clock } from "./clock.js";
import type { LoomConfig } from "./config.js";
import { WARNING_CODES } from "./constants.js";
import { appBus, type WarningSink } from "./warnings.js";
import { EffectRuntime } from "./effects/runtime.js";
import { validateClaimCheck } from "./effects/claimCheckConfig.js";
import { UnknownExecutionError } from "./errors.js";
import { Execution } from "./journal/execution.js";
import { declarationOf } from "./logicDeclaration.js";
import type { ExecutionHost, HostedExecution, MacrostepObserver, StepCall } from "./journal/host.js";
import { Journal } from "./journal/journal.js";
import { SubjectCodec } from "./journal/sealing.js";
import { machineHashOf, versionOption, type StartedLogic } from "./journal/versions.js";
import { AppLogics } from "./logics.js";
import { candidates, selectExecutions } from "./journal/executionsQuery.js";
import { appClaimCheckLayer } from "./effects/claimCheckPreset.js";
import { erasedExecutionError } from "./lifecycle/erasureStatus.js";
import { INTERNAL_EFFECT_IDS, isInternalEffect } from "./lifecycle/host.js";
import { CHILD_EFFECT_ID, type TreeAddress, type TreeMessage } from "./journal/children.js";
import type { ToolApprovalEvent } from "../machines/helpers/messages.js";

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
  /** Runs a child execution's step (ADR 0012): starts or resumes the child, resolves with its output. */
  runChild(call: StepCall): Promise<unknown>;
  /** Journals a message of a tree in its receiver's log (ExecutionHost.deliver). */
  deliver(message: TreeMessage, from: string): Promise<void>;
  /** A live action's send through a tree ref (ExecutionHost.sendLive). */
  sendLive(address: TreeAddress, event: EventObject): Promise<void>;
  /** Whether a child execution is settled and still running (ExecutionHost.childSettled). */
  childSettled(executionId: string): Promise<boolean>;
  /** Stops a child execution (ExecutionHost.stopChild). */
  stopChild(executionId: string, reason: string): Promise<void>;
  /** A decision for a call waiting in a child execution (ExecutionHost.routeApproval). */
  routeApproval?(executionId: string, decision: ToolApprovalEvent): Promise<string | undefined>;
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
  readonly checkDeterminism: boolean;
  readonly maxFanOut: number | undefined;
  /** The logics it knows and the checks of a start (./logics.ts). */
  readonly logics: AppLogics;
  private isClosed = false;

  constructor(
    private readonly config: LoomConfig,
    private readonly owner: AppHostOwner,
  ) {
    const claimCheck = config.execution?.claimCheck;
    if (claimCheck !== undefined) validateClaimCheck(claimCheck, config.effects, config.security?.crypto !== undefined);
    // The one warning path (./warnings.ts): everything below reports through `this.warn`.
    ({ bus: this.bus, warn: this.warn } = appBus(config.observability?.onWarn));
    this.clock = config.clock ?? realClock;
    const { warn } = this;
    const layer = claimCheck && appClaimCheckLayer(claimCheck, config.effects, this.bus, warn);
    this.effects = new EffectRuntime(config, this.bus, {
      clock: this.clock,
      readLog: (id) => owner.readLog(id),
      treeMembers: async (root) => selectExecutions(await candidates(config.stores.events, { root }), { root }),
      warn,
      ...(layer ? { claimCheck: layer } : {}),
    });
    // security.crypto: a subject's records and snapshot states are sealed under its key (actors/journal/sealing.ts).
    const codec = config.security?.crypto
      ? new SubjectCodec(config.security.crypto.keys, config.stores.events)
      : undefined;
    this.journal = new Journal(config.stores.events, codec, warn);
    this.logics = new AppLogics(config, this.journal, (id) => owner.requireMaintenance(id));
    this.effectIds = new Set([...Object.keys(config.effects), ...INTERNAL_EFFECT_IDS]);
    this.snapshotEvery = config.execution?.snapshotEvery ?? 64;
    this.checkDeterminism = config.execution?.checkDeterminism === true;
    this.maxFanOut = config.execution?.children?.maxFanOut;
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
    const { effectId } = call.pending;
    if (effectId === CHILD_EFFECT_ID) return this.owner.runChild(call);
    return isInternalEffect(effectId) ? this.owner.runInternalStep(call) : this.effects.run(call);
  }

  deliver(message: TreeMessage, from: string): Promise<void> {
    return this.owner.deliver(message, from);
  }

  sendLive(address: TreeAddress, event: EventObject): Promise<void> {
    return this.owner.sendLive(address, event);
  }

  stopChild(executionId: string, reason: string): Promise<void> {
    return this.owner.stopChild(executionId, reason);
  }

  childSettled(executionId: string): Promise<boolean> {
    return this.owner.childSettled(executionId);
  }

  routeApproval(executionId: string, decision: ToolApprovalEvent): Promise<string | undefined> {
    return this.owner.routeApproval?.(executionId, decision) ?? Promise.resolve(undefined);
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
   * A new Execution of `machine` on this host, with its logic's macrostep observer; not started nor recovered.
   * `journaled`: the identity its EXECUTION_STARTED holds (a rebuild), so the definition is not hashed again.
   */
  async create(
    machine: AnyStateMachine,
    executionId: string,
    subject: string | undefined,
    journaled?: StartedLogic,
  ): Promise<Execution> {
    const identity =
      journaled?.machineHash === undefined
        ? { machineHash: await machineHashOf(machine), ...versionOption(machine) }
        : {
            machineHash: journaled.machineHash,
            ...(journaled.version === undefined ? {} : { version: journaled.version }),
          };
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
    const { machine, started } = await this.logics.forExecution(info, logic);
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

  // What the logic declared to run after each macrostep (agentLoop$: its warnings), bound once per execution to this app's warning sink.
  private observerOf(machine: AnyStateMachine): MacrostepObserver | undefined {
    const declared = declarationOf(machine);
    const after = declared?.afterMacrostep;
    if (!after) return undefined;
    const { warn } = this;
    return (snapshot, run) => after.call(declared, snapshot, run, warn);
  }
}
