// One journaled execution: runs a machine through the pure planner, appends each macrostep before
// acting on it, runs effects and timers, and rebuilds itself from the journal on resume.
import type { AnyMachineSnapshot, AnyStateMachine, EventObject, InspectionEvent, Observer, Subscription } from "xstate";
import { EVENT_RECEIVED, EXECUTION_ENDED, EXECUTION_STARTED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import { foldRecords } from "./replay.js";
import type { JournalRecord, RecordBody } from "../../stores/types.js";
import { failedFields, unwrapStepResult } from "../effects/chain.js";
import { AppClosedError, ConfigError, NonDeterminismError, NonJsonOutputError, type SerializedError } from "../errors.js";
import { planMacrostep, persistState, restoreState, type Macrostep, type MacrostepInput, type PendingStep, type RuntimeState } from "./planner.js";
import type { Runtime } from "./host.js";
import { plainJson } from "./json.js";

type Listener = (snapshot: AnyMachineSnapshot) => void;

export interface ExecutionOptions {
  executionId: string;
  subject?: string;
  machine: AnyStateMachine;
  machineHash: string;
}

/** What a replay did: the numbers a story or the CLI prints. */
export interface ReplayReport {
  fromSnapshotSeq: number;
  recordsReplayed: number;
  stepsServedFromLog: number;
  stepsToRun: number;
}

export class Execution {
  readonly executionId: string;
  readonly subject: string | undefined;
  readonly machine: AnyStateMachine;
  readonly sessionId: string;
  state!: RuntimeState;
  seq = 0;
  replay: ReplayReport = { fromSnapshotSeq: 0, recordsReplayed: 0, stepsServedFromLog: 0, stepsToRun: 0 };
  /** Report-only warnings already given in this run (once per run, again after a resume in a fresh app). */
  readonly warned = new Set<string>();
  /** Set when the journal refused a write; the execution accepts nothing more. */
  failure: unknown;
  private snapshotSeq = 0;
  private mailbox: Promise<void> = Promise.resolve();
  private readonly running = new Map<string, AbortController>();
  // Effects started and not yet journaled (or dropped): a step counts until its outcome is applied.
  private inflight = 0;
  private halted = false;
  private readonly timerCancels = new Map<string, () => void>();
  private readonly listeners = new Set<Observer<AnyMachineSnapshot>>();
  private readonly settledWaiters: { resolve: () => void }[] = [];
  private readonly machineHash: string;

  constructor(
    private readonly runtime: Runtime,
    options: ExecutionOptions,
  ) {
    this.executionId = options.executionId;
    this.subject = options.subject;
    this.machine = options.machine;
    this.machineHash = options.machineHash;
    this.sessionId = `loom:${options.executionId}`;
  }

  get ended(): boolean {
    return this.state?.status !== undefined && this.state.status !== "running";
  }

  /** Journals EXECUTION_STARTED with the initial macrostep and starts what it asks for. */
  async start(input: unknown): Promise<void> {
    await this.enqueue({
      type: EXECUTION_STARTED,
      logicId: this.machine.id,
      machineHash: this.machineHash,
      ...(this.subject === undefined ? {} : { subject: this.subject }),
      input: input ?? null,
      schema: 1,
    });
  }

  /** Rebuilds the state from the latest snapshot and the log's tail, then runs what has no outcome. */
  /**
   * `observe: false` rebuilds the state only, to measure or read it: no inspection events, no hooks
   * (warnings), and nothing runs afterwards.
   */
  async recover(options: { observe?: boolean } = {}): Promise<void> {
    const observe = options.observe !== false;
    const journal = this.runtime.journal;
    const stored = await journal.getSnapshot(this.executionId);
    let from = 1;
    if (stored) {
      this.state = restoreState(this.machine, stored.state);
      this.seq = stored.seq;
      this.snapshotSeq = stored.seq;
      from = stored.seq + 1;
      this.replay.fromSnapshotSeq = stored.seq;
    }
    const tail = await journal.readForReplay(this.executionId, from);
    const folded = foldRecords(this.planContext(), { state: this.state, seq: this.seq }, tail, (step) => {
      if (step.records[0]!.type === STEP_COMPLETED || step.records[0]!.type === STEP_FAILED) this.replay.stepsServedFromLog++;
      this.replay.recordsReplayed += step.records.length;
      this.state = step.state;
      this.seq = step.records.at(-1)!.seq;
      if (observe) {
        this.inspectStep(step);
        this.runtime.afterMacrostep(this);
      }
    });
    if (folded.state) this.state = folded.state;
    this.seq = folded.seq;
    if (!this.state) throw new NonDeterminismError(this.executionId, 1, "record", "EXECUTION_STARTED", tail[0]?.type ?? "an empty log");
    this.replay.stepsToRun = this.ended ? 0 : Object.keys(this.state.pending).length;
    if (!observe) return;
    this.announce(); // a resume from a snapshot with no tail has replayed no macrostep to announce it with
    if (this.ended) return;
    for (const pending of Object.values(this.state.pending)) this.runEffect(pending);
    for (const timerId of Object.keys(this.state.timers)) this.armTimer(timerId);
  }

  /** Journals an external event, then delivers it. */
  send(event: EventObject): Promise<void> {
    // Refused before the mailbox: a bad event is the caller's error and leaves the execution running.
    if (typeof event !== "object" || event === null || Array.isArray(event) || typeof event.type !== "string") {
      return Promise.reject(new ConfigError("send.event", `an event is an object with a string "type"; got ${JSON.stringify(event) ?? String(event)}.`));
    }
    let plain: EventObject;
    try {
      plain = plainJson(event, (reason) => new ConfigError("send.event", `event "${event.type}" must be plain JSON to be journaled, but holds ${reason}.`));
    } catch (error) {
      return Promise.reject(error);
    }
    // A send the app closed before its turn in the mailbox was never journaled: say so, never resolve.
    const refused = () => new AppClosedError(`send event "${plain.type}" to execution "${this.executionId}"`);
    return this.enqueue({ type: EVENT_RECEIVED, event: plain }, refused);
  }

  /** Ends the execution as stopped: journaled, running effects aborted, timers disarmed. */
  stop(reason: string): Promise<void> {
    return this.enqueueRaw(async () => {
      if (this.ended) return;
      const at = this.runtime.clock.now();
      const error: SerializedError = { name: "ExecutionStoppedError", message: reason };
      await this.write([{ seq: this.seq + 1, at, type: EXECUTION_ENDED, status: "stopped", error }]);
      this.state = { ...this.state, status: "stopped", error, pending: {}, timers: {} };
      this.halt();
      this.notify();
      this.runtime.executionEnded(this);
    });
  }

  getSnapshot(): AnyMachineSnapshot {
    const snapshot = this.state.snapshot;
    if (this.state.status === "error" || this.state.status === "stopped") {
      return { ...snapshot, status: this.state.status === "error" ? "error" : "stopped", error: this.state.error } as AnyMachineSnapshot;
    }
    return snapshot;
  }

  subscribe(observer: Observer<AnyMachineSnapshot> | Listener): Subscription {
    const o: Observer<AnyMachineSnapshot> = typeof observer === "function" ? { next: observer } : observer;
    this.listeners.add(o);
    return { unsubscribe: () => this.listeners.delete(o) };
  }

  /** Resolves once nothing is queued and no effect is running (or the execution ended); armed timers do not count. */
  whenSettled(): Promise<void> {
    return this.mailbox.then(() => {
      if (this.ended || this.failure || this.halted || this.inflight === 0) return;
      return new Promise<void>((resolve) => this.settledWaiters.push({ resolve })).then(() => this.whenSettled());
    });
  }

  /** Releases timers and aborts effects without journaling anything (the app is closing, or the process "dies"). */
  halt(): void {
    this.halted = true;
    for (const controller of this.running.values()) controller.abort(new Error("execution halted"));
    this.running.clear();
    for (const cancel of this.timerCancels.values()) cancel();
    this.timerCancels.clear();
    this.wakeSettled();
  }

  persistedState(): unknown {
    return persistState(this.machine, this.state);
  }

  private planContext() {
    return { machine: this.machine, executionId: this.executionId, effectIds: this.runtime.effectIds };
  }

  private enqueue(partial: RecordBody<MacrostepInput["type"]>, whenClosed?: () => Error): Promise<void> {
    return this.enqueueRaw(async () => {
      if (this.ended && partial.type !== EXECUTION_STARTED) return;
      const input: MacrostepInput = { seq: this.seq + 1, at: this.runtime.clock.now(), ...partial };
      const step = planMacrostep(this.planContext(), this.state, input);
      await this.write(step.records);
      this.apply(step);
    }, whenClosed);
  }

  // Internal work (outcomes, timers) found after close is dropped: a resume re-runs it from the journal.
  private enqueueRaw(work: () => Promise<void>, whenClosed?: () => Error): Promise<void> {
    const run = this.mailbox.then(() => {
      if (this.failure) throw this.failure;
      if (this.runtime.closed) {
        if (whenClosed) throw whenClosed();
        return;
      }
      return work();
    });
    this.mailbox = run.catch(() => undefined);
    return run;
  }

  // Write-ahead: nothing of a macrostep is acted on before its records are in the journal.
  private async write(records: JournalRecord[]): Promise<void> {
    try {
      await this.runtime.journal.append(this.executionId, this.seq, records, this.subject);
    } catch (error) {
      this.failure = error;
      this.halt();
      this.runtime.executionFailed(this, error);
      throw error;
    }
    this.seq = records.at(-1)!.seq;
    this.runtime.bus.emit("append", { executionId: this.executionId, records });
  }

  private apply(step: Macrostep): void {
    this.state = step.state;
    for (const childId of step.stopped) {
      this.running.get(childId)?.abort(new Error(`step ${childId} was stopped: its state was left`));
      this.running.delete(childId);
    }
    for (const timerId of step.cancelled) {
      this.timerCancels.get(timerId)?.();
      this.timerCancels.delete(timerId);
    }
    if (this.ended) this.halt();
    else {
      for (const pending of step.started) this.runEffect(pending);
      for (const timerId of step.armed) this.armTimer(timerId);
    }
    this.inspectStep(step);
    this.runtime.afterMacrostep(this);
    this.notify();
    this.maybeSnapshot();
    if (this.ended) this.runtime.executionEnded(this);
    this.wakeSettled();
  }

  private runEffect(pending: PendingStep): void {
    const controller = new AbortController();
    this.running.set(pending.childId, controller);
    this.inflight++;
    const outcome = async (): Promise<RecordBody<typeof STEP_COMPLETED | typeof STEP_FAILED>> => {
      const base = { stepId: pending.stepId, effectId: pending.effectId };
      try {
        // The chain adds its facts: the model usage of a completed step, where a failed one stopped.
        const { output, usage } = unwrapStepResult(await this.runtime.runStep(this, pending, controller.signal));
        return { type: STEP_COMPLETED, ...base, ...jsonOutput(pending.stepId, output), ...(usage ? { usage } : {}) };
      } catch (error) {
        return { type: STEP_FAILED, ...base, ...failedFields(error) };
      }
    };
    outcome()
      .then((record) => {
        // An aborted step (state left, execution stopped or halted) journals nothing: its outcome is not wanted.
        if (this.running.get(pending.childId) !== controller) return;
        this.running.delete(pending.childId);
        return this.enqueue(record);
      })
      .catch(() => undefined)
      .finally(() => {
        this.inflight--;
        this.wakeSettled();
      });
  }

  private armTimer(timerId: string): void {
    const timer = this.state.timers[timerId];
    if (!timer) return;
    this.timerCancels.get(timerId)?.();
    const cancel = this.runtime.clock.setTimer(() => {
      this.timerCancels.delete(timerId);
      this.enqueue({ type: EVENT_RECEIVED, event: timer.event, timerId })
        .catch(() => undefined)
        .finally(() => this.wakeSettled());
    }, timer.dueAt - this.runtime.clock.now());
    this.timerCancels.set(timerId, cancel);
  }

  private maybeSnapshot(): void {
    const every = this.runtime.snapshotEvery;
    if (!every || this.seq - this.snapshotSeq < every) return;
    this.snapshotSeq = this.seq;
    const snapshot = { seq: this.seq, at: this.runtime.clock.now(), state: this.persistedState() };
    // A snapshot is a cache of the log: a failed write costs a longer replay, never data.
    this.runtime.journal.putSnapshot(this.executionId, snapshot, this.subject).catch((error) => this.runtime.warn("snapshot", error));
  }

  private notify(): void {
    const snapshot = this.getSnapshot();
    for (const listener of [...this.listeners]) {
      try {
        listener.next?.(snapshot);
        if (this.ended) listener.complete?.();
      } catch (error) {
        this.runtime.warn("subscriber", error);
      }
    }
    // An ended execution notifies nobody again: its observers are completed and let go.
    if (this.ended) this.listeners.clear();
  }

  private wakeSettled(): void {
    for (const waiter of this.settledWaiters.splice(0)) waiter.resolve();
  }

  // The actor is announced with its first macrostep: an inspector reads actorRef.getSnapshot() when told
  // of the actor, and before the first macrostep (or the snapshot a resume starts from) there is none.
  private announced = false;

  private announce(): void {
    if (this.announced) return;
    this.announced = true;
    this.runtime.inspect({ type: "@xstate.actor", actorRef: this.runtime.actorRefOf(this), rootId: this.sessionId } as InspectionEvent);
  }

  private inspectStep(step: Macrostep): void {
    const actorRef = this.runtime.actorRefOf(this);
    this.announce();
    this.runtime.inspect({ type: "@xstate.event", sourceRef: undefined, actorRef, event: step.event, rootId: this.sessionId } as InspectionEvent);
    this.runtime.inspect({ type: "@xstate.snapshot", actorRef, event: step.event, snapshot: step.state.snapshot, rootId: this.sessionId } as InspectionEvent);
  }
}

/** A step's output as journaled: plain JSON, so the live run and every replay deliver the same value. */
function jsonOutput(stepId: string, output: unknown): { output?: unknown } {
  if (output === undefined) return {};
  return { output: plainJson(output, (reason) => new NonJsonOutputError(stepId, reason)) };
}
