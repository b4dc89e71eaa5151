// One journaled execution: runs a machine through the pure planner, appends each macrostep before
// acting on it, runs effects and timers, and rebuilds itself from the journal on resume.
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine, EventObject, Observer, Subscription } from "xstate";
import {
  EVENT_RECEIVED,
  EVENT_SCHEMA,
  EXECUTION_ENDED,
  EXECUTION_STARTED,
  STEP_COMPLETED,
  STEP_FAILED,
} from "../../stores/schema.js";
import { foldRecords } from "./replay.js";
import type { JournalRecord, MacrostepInput, RecordBody } from "../../stores/types.js";
import { WARNING_CODES } from "../constants.js";
import { AppClosedError, errorText, NonDeterminismError, serializeError, type SerializedError } from "../errors.js";
import {
  planMacrostep,
  persistState,
  restoreState,
  type Macrostep,
  type PendingStep,
  type PlanContext,
  type RuntimeState,
} from "./planner.js";
import { JournaledActor } from "./actor.js";
import type { ExecutionHost, MacrostepObserver, ReplayReport, StepCall, UnstampedRecord } from "./host.js";
import { ExecutionObservers, snapshotOf } from "./observers.js";
import { runStepToRecord } from "./stepOutcome.js";
import { EmittedListeners, runLiveActions } from "./liveActions.js";
import {
  childSpecOf,
  isDelivered,
  referencedLogic,
  withLiveSends,
  type ParentLink,
  type TreeMessage,
} from "./children.js";
import { LiveSources } from "./sources.js";
import { isEventObject } from "../../stores/shapes.js";
import { MESSAGES_DELIVERED } from "../../stores/schema.js";

export type { ReplayReport } from "./host.js";

export interface ExecutionOptions {
  executionId: string;
  subject?: string;
  machine: AnyStateMachine;
  /** Journaled in EXECUTION_STARTED: the definition hash, and the declared version (absent: it declares none). */
  identity: { machineHash: string; version?: string };
  /** Called after every macrostep, live or replayed: its logic's hook (the agent loop's state-growth warning). */
  observer?: MacrostepObserver | undefined;
}

export class Execution {
  // Read through the options rather than copied: each own field is one more hidden-class step for V8 to
  // rebuild when no Execution survived the last GC, which an app's first start after idle pays.
  get executionId(): string {
    return this.options.executionId;
  }
  get subject(): string | undefined {
    return this.options.subject;
  }
  get machine(): AnyStateMachine {
    return this.options.machine;
  }
  get sessionId(): string {
    return `loom:${this.options.executionId}`;
  }
  /** The actor callers hold for this execution (getSnapshot / subscribe / send); the inspector's actorRef. Made at first use (after a start's first step began). */
  get ref(): JournaledActor {
    return (this.actor ??= new JournaledActor(this, this.host));
  }
  state!: RuntimeState;
  replay: ReplayReport = { fromSnapshotSeq: 0, recordsReplayed: 0, stepsServedFromLog: 0, stepsToRun: 0 };
  /** Report-only warnings already given in this run (once per run, again after a resume in a fresh app). */
  readonly warned = new Set<string>();
  /** Set when the journal refused a write; the execution accepts nothing more. */
  failure: unknown;
  // The journal's head: only this execution's own writes move it.
  private head = 0;
  private snapshotSeq = 0;
  private mailbox: Promise<void> = Promise.resolve();
  private queued = 0; // turns enqueued in the mailbox and not yet done
  private readonly running = new Map<string, AbortController>();
  // Effects started and not yet journaled (or dropped): a step counts until its outcome is applied.
  private inflight = 0;
  private wakes = 0; // wakeSettled calls so far
  // The in-flight steps that are child executions (child id to execution id): the tree is settled once they are.
  private readonly childRuns = new Map<string, string>();
  private halted = false;
  private readonly timerCancels = new Map<string, () => void>();
  private readonly settledWaiters: { resolve: () => void }[] = [];
  /** Which definition of its logic it runs (journaled in EXECUTION_STARTED): its hash, and its declared version. */
  get identity(): { machineHash: string; version?: string } {
    return this.options.identity;
  }
  private actor: JournaledActor | undefined;
  private listeners: EmittedListeners | undefined; // actor.on's, made at first use
  private watchers: ExecutionObservers | undefined; // made at first use, as the actor: a start's first step begins before either is needed
  private readonly plan: PlanContext;
  // Messages of the tree leave one at a time, in order (ADR 0012 D4); a failed delivery holds the rest until a recovery.
  private outgoing: Promise<void> = Promise.resolve();
  private deliveryFailed = false;
  private liveSources: LiveSources | undefined; // callback and observable actors running here, made at first use

  constructor(
    private readonly host: ExecutionHost,
    private readonly options: ExecutionOptions,
  ) {
    this.plan = {
      machine: options.machine,
      executionId: options.executionId,
      effectIds: host.effectIds,
      ...(host.checkDeterminism ? { checkDeterminism: true } : {}),
      ...(host.maxFanOut === undefined ? {} : { maxFanOut: host.maxFanOut }),
    };
  }

  private get observers(): ExecutionObservers {
    return (this.watchers ??= new ExecutionObservers(this.host, this, this.options.observer));
  }

  /** The seq of the last record this execution journaled (or replayed). */
  get seq(): number {
    return this.head;
  }

  get ended(): boolean {
    return this.state?.status !== undefined && this.state.status !== "running";
  }

  /** Journals EXECUTION_STARTED with the initial macrostep and starts what it asks for; a child names its parent and root. */
  async start(input: unknown, links?: { parent: ParentLink; root: string }): Promise<void> {
    await this.enqueue({
      type: EXECUTION_STARTED,
      logicId: this.machine.id,
      ...this.identity,
      ...(this.subject === undefined ? {} : { subject: this.subject }),
      input: input ?? null,
      schema: EVENT_SCHEMA.version,
      ...(links ? { parent: links.parent, root: links.root } : {}),
    });
  }

  /** The root of this execution's tree: its own id for a root. */
  get root(): string {
    return this.state?.parent?.root ?? this.executionId;
  }

  /**
   * Journals a message from another execution of the tree (ADR 0012 D4) as an external event, write-ahead, and
   * delivers it; a duplicate (at or below the last message journaled from its sender) is dropped unwritten, as is a
   * message to an ended execution (XState drops an event sent to a stopped actor).
   */
  receive(event: EventObject, from: { executionId: string; messageId: string }): Promise<void> {
    return this.enqueueRaw(async () => {
      if (this.ended || isDelivered(this.state.inbox?.[from.executionId], from.messageId)) return;
      await this.macrostep({ type: EVENT_RECEIVED, event, from });
    });
  }

  /** Hands `event` to the live source `childId` (a tree's message to it, ADR 0012 D4); dropped when it does not run. */
  toSource(childId: string, event: EventObject): void {
    if (!this.ended && this.state.sources?.[childId]) this.liveSources?.send(childId, event);
  }

  private get sources(): LiveSources {
    return (this.liveSources ??= new LiveSources((childId, event) => void this.fromSource(childId, event)));
  }

  // What a live source sent (sendBack, its done, error or snapshot): journaled as this execution's event, write-ahead.
  private fromSource(childId: string, event: AnyEventObject): Promise<void> {
    return this.enqueueRaw(async () => {
      if (this.ended || !this.state.sources?.[childId]) return;
      let recorded: unknown;
      try {
        recorded = JSON.parse(JSON.stringify(event));
        if (!isEventObject(recorded)) throw new TypeError("not an event object");
      } catch (error) {
        this.host.warn({
          code: WARNING_CODES.messageUndelivered,
          message: `event "${event.type}" of live source "${childId}" is not JSON and was not journaled: ${String(error)}`,
          executionId: this.executionId,
        });
        return;
      }
      if (!isEventObject(recorded)) return;
      await this.macrostep({ type: EVENT_RECEIVED, event: recorded, from: { source: childId } });
      if (!this.state.sources?.[childId]) this.liveSources?.stop(childId);
    }).catch(() => undefined);
  }

  /** Resolves once every message planned so far left (journaled by its receiver, or dropped). */
  whenDelivered(): Promise<void> {
    return this.outgoing;
  }

  /**
   * Rebuilds the state from the latest snapshot and the log's tail, then runs what has no outcome.
   * `observe: false` rebuilds the state only, to measure or read it: no inspection events, no hooks
   * (warnings), and nothing runs afterwards.
   */
  async recover(options: { observe?: boolean; firstRun?: boolean } = {}): Promise<void> {
    const observe = options.observe !== false;
    const journal = this.host.journal;
    const stored = await journal.getSnapshot(this.executionId);
    let from = 1;
    if (stored) {
      this.state = restoreState(this.machine, stored.state);
      this.head = stored.seq;
      this.snapshotSeq = stored.seq;
      from = stored.seq + 1;
      this.replay.fromSnapshotSeq = stored.seq;
    }
    const tail = await journal.readForReplay(this.executionId, from);
    let last: Macrostep | undefined;
    const folded = foldRecords(this.plan, { state: this.state, seq: this.head }, tail, (step) => {
      last = step;
      if (step.records[0]!.type === STEP_COMPLETED || step.records[0]!.type === STEP_FAILED)
        this.replay.stepsServedFromLog++;
      this.replay.recordsReplayed += step.records.length;
      this.state = step.state;
      this.head = step.records.at(-1)!.seq;
      if (observe) this.observers.macrostep(step);
    });
    if (folded.state) this.state = folded.state;
    this.head = folded.seq;
    if (!this.state)
      throw new NonDeterminismError(
        this.executionId,
        1,
        "record",
        "EXECUTION_STARTED",
        tail[0]?.type ?? "an empty log",
      );
    this.replay.stepsToRun = this.ended ? 0 : Object.keys(this.state.pending).length;
    if (!observe) return;
    this.observers.announce(); // a resume from a snapshot with no tail has replayed no macrostep to announce it with
    // A submitted execution's first claim: its log is the submitter's first macrostep, whose actions nobody ran.
    if (options.firstRun && last?.records[0]?.type === EXECUTION_STARTED && last.actions.length > 0) {
      try {
        this.runActions(last.actions);
      } catch (thrown) {
        return this.failInAction(last, thrown);
      }
    }
    if (!this.ended) {
      for (const pending of Object.values(this.state.pending)) this.runEffect(pending);
      for (const timerId of Object.keys(this.state.timers)) this.armTimer(timerId);
      // Live sources start again (at least once, like an effect that had started); one spawned by its logic object cannot.
      for (const [childId, spec] of Object.entries(this.state.sources ?? {})) {
        const logic = spec.src === undefined ? undefined : referencedLogic(this.machine, spec.src);
        if (logic) this.sources.start(childId, logic, spec.input, spec.syncSnapshot === true);
      }
    }
    // What the last macrosteps planned for the tree and may not have done before the crash: the receivers and the
    // children drop what they have already (ADR 0012 D3). After the steps: a child they start exists to receive.
    if (this.state.outbox?.length) this.sendMessages(this.state.outbox);
    if (this.state.stoppedChildren?.length) this.stopChildren(this.state.stoppedChildren, "its parent stopped it");
  }

  /** Journals an external event (plain JSON: its actor, `ref`, checked it), then delivers it; a throw of `admit`, in its turn, refuses it unwritten. */
  send(event: EventObject, admit?: (snapshot: AnyMachineSnapshot) => void): Promise<void> {
    // A send the app closed before its turn in the mailbox was never journaled: say so, never resolve.
    const refused = () => new AppClosedError(`send event "${event.type}" to execution "${this.executionId}"`);
    return this.enqueue({ type: EVENT_RECEIVED, event }, refused, admit);
  }

  /** Ends the execution as stopped: journaled, running effects aborted, timers disarmed. */
  stop(reason: string): Promise<void> {
    return this.enqueueRaw(async () => {
      if (this.ended) return;
      const at = this.host.clock.now();
      const error: SerializedError = { name: "ExecutionStoppedError", message: reason };
      await this.write([{ seq: this.head + 1, at, type: EXECUTION_ENDED, status: "stopped", error }]);
      const children = childExecutions(this.state.pending);
      this.state = { ...this.state, status: "stopped", error, pending: {}, timers: {} };
      this.halt();
      this.observers.notify(this.getSnapshot(), this.ended);
      this.host.ended(this);
      // Its children stop with it, depth first, before this stop resolves (a child that recovers finds it ended).
      await Promise.all(children.map((id) => this.host.stopChild(id, reason).catch(() => undefined)));
    });
  }

  getSnapshot(): AnyMachineSnapshot {
    return snapshotOf(this.state);
  }

  subscribe(observer: Observer<AnyMachineSnapshot> | ((snapshot: AnyMachineSnapshot) => void)): Subscription {
    return this.observers.subscribe(observer);
  }

  /** Listens to the events emit() emits in live transitions (XState's `actor.on`); replayed transitions emit nothing. */
  on(type: string, handler: (event: AnyEventObject) => void): Subscription {
    return (this.listeners ??= new EmittedListeners()).on(type, handler);
  }

  /** Resolves once nothing is queued and no effect is running (or the execution ended); armed timers do not count. */
  whenSettled(): Promise<void> {
    return this.mailbox.then(async () => {
      if (this.ended || this.failure || this.halted || this.inflight === 0) return;
      // Only child executions run: settled when each of them is, still running (one that ended owes this one its outcome).
      if (this.childRuns.size === this.inflight) {
        const wakes = this.wakes;
        const children = [...this.childRuns.values()];
        const idle = await Promise.all(children.map((id) => this.host.childSettled(id)));
        if (this.wakes !== wakes) return this.whenSettled(); // a step settled meanwhile (its wake is spent): look again
        if (idle.every(Boolean)) return;
      }
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
    this.liveSources?.stopAll();
    this.wakeSettled();
  }

  /**
   * The child executions this execution of a tree (a parent or a child) waits on when it waits only on them and on
   * messages: nothing queued, every step in flight a child's, no timer armed, no live source, no message undelivered.
   * Undefined when anything else is under way (or it ended, failed or was halted), and for a lone execution. A fleet
   * worker parks such an execution (ADR 0012 D9).
   */
  waitingOnlyOnTree(): string[] | undefined {
    if (this.ended || this.failure || this.halted || this.queued > 0) return undefined;
    if (this.childRuns.size === 0 && !this.state.parent) return undefined;
    if (this.inflight !== this.childRuns.size) return undefined;
    const { timers, sources, outbox } = this.state;
    if (Object.keys(timers).length > 0 || Object.keys(sources ?? {}).length > 0 || (outbox?.length ?? 0) > 0)
      return undefined;
    return [...new Set(this.childRuns.values())];
  }

  /**
   * Lets the execution go without journaling anything, as a refused write does: halted, nothing more of it written,
   * app.result here rejects with `reason`. A fleet worker parks an execution so (a resume replaces it).
   */
  letGo(reason: Error): void {
    if (this.failure) return;
    this.failure = reason;
    this.halt();
    this.host.failed(this, reason);
  }

  persistedState(): unknown {
    return persistState(this.machine, this.state);
  }

  private enqueue(
    partial: RecordBody<MacrostepInput["type"]>,
    whenClosed?: () => Error,
    admit?: (snapshot: AnyMachineSnapshot) => void,
  ): Promise<void> {
    return this.enqueueRaw(async () => {
      admit?.(this.getSnapshot());
      if (this.ended && partial.type !== EXECUTION_STARTED) return;
      await this.macrostep(partial);
    }, whenClosed);
  }

  // One macrostep, in the execution's turn: planned, journaled, then acted on.
  private async macrostep(partial: RecordBody<MacrostepInput["type"]>): Promise<void> {
    const input: MacrostepInput = { seq: this.head + 1, at: this.host.clock.now(), ...partial };
    const step = planMacrostep(this.plan, this.state, input);
    await this.write(step.records);
    // Durable: its custom actions and log()s run now, once (replay never runs them); a throw ends the execution.
    let emitted: AnyEventObject[];
    try {
      emitted = this.runActions(step.actions);
    } catch (thrown) {
      return this.failInAction(step, thrown);
    }
    this.apply(step, emitted);
  }

  // A macrostep's custom actions, log()s and emit()s, run live; a throw propagates.
  private runActions(actions: Macrostep["actions"]): AnyEventObject[] {
    // A custom action's send to an actor elsewhere in the tree (a ref system.get found) goes to it at once.
    return withLiveSends(
      (address, event) =>
        void this.host.sendLive(address, event).catch((error: unknown) =>
          this.host.warn({
            code: WARNING_CODES.messageUndelivered,
            message: `an action's send of "${event.type}" to "${address.executionId}" was not delivered: ${errorText(serializeError(error))}`,
            executionId: this.executionId,
          }),
        ),
      () => runLiveActions(actions),
    );
  }

  // Sends messages of the tree in order after their macrostep is durable; the delivered ones are acknowledged in this
  // log (MESSAGES_DELIVERED), so a recovery re-sends only the others. A failure holds every later message back.
  private sendMessages(messages: readonly TreeMessage[]): void {
    if (messages.length === 0) return;
    this.outgoing = this.outgoing.then(async () => {
      const delivered: string[] = [];
      for (const message of messages) {
        if (this.deliveryFailed) break;
        try {
          await this.host.deliver(message, this.executionId);
          delivered.push(message.messageId);
        } catch (error) {
          this.deliveryFailed = true;
          if (!this.host.closed())
            this.host.warn({
              code: WARNING_CODES.messageUndelivered,
              message: `message ${message.messageId} to "${message.to}" was not delivered (a resume re-sends it): ${errorText(serializeError(error))}`,
              executionId: this.executionId,
            });
        }
      }
      if (delivered.length > 0) await this.acknowledge(delivered).catch(() => undefined);
    });
  }

  // An ended execution's writer is released: its acknowledgements are not journaled (a recovery re-sends, deduplicated).
  private acknowledge(messageIds: string[]): Promise<void> {
    return this.enqueueRaw(async () => {
      if (this.ended || this.failure) return;
      await this.write([{ seq: this.head + 1, at: this.host.clock.now(), type: MESSAGES_DELIVERED, messageIds }]);
      const done = new Set(messageIds);
      const outbox = this.state.outbox?.filter((message) => !done.has(message.messageId));
      const next: RuntimeState = { ...this.state };
      if (outbox?.length) next.outbox = outbox;
      else delete next.outbox;
      this.state = next;
    });
  }

  // The child executions a macrostep stopped: stopped, journaled in their logs, before this execution's next turn.
  private stopChildren(executionIds: readonly string[], reason: string): void {
    void this.enqueueRaw(() =>
      Promise.all(executionIds.map((id) => this.host.stopChild(id, reason).catch(() => undefined))).then(
        () => undefined,
      ),
    ).catch(() => undefined);
  }

  // An action of a durable macrostep threw: as XState's actor, the execution ends in error with the snapshot it
  // had before that transition (the initial one when it was the start's), and nothing the macrostep started runs.
  // Journaled as an EXECUTION_ENDED of its own after the macrostep (replay.ts folds it alike).
  private async failInAction(step: Macrostep, thrown: unknown): Promise<void> {
    const error = serializeError(thrown);
    if (step.state.status !== "running") {
      // The macrostep ended the execution already, and its end is journaled: the throw is reported, not journaled twice.
      this.host.warn({
        code: WARNING_CODES.actionFailed,
        message: errorText(error),
        executionId: this.executionId,
      });
      return this.apply(step, []);
    }
    const before = this.state ?? step.state;
    await this.write([
      { seq: this.head + 1, at: this.host.clock.now(), type: EXECUTION_ENDED, status: "error", error },
    ]);
    this.state = { ...before, status: "error", error, pending: {}, timers: {} };
    this.halt();
    this.observers.macrostep(step);
    this.observers.notify(this.getSnapshot(), this.ended);
    this.host.ended(this);
    this.wakeSettled();
  }

  // Internal work (outcomes, timers) found after close is dropped: a resume re-runs it from the journal.
  private enqueueRaw(work: () => Promise<void>, whenClosed?: () => Error): Promise<void> {
    this.queued++;
    const run = this.mailbox.then(() => {
      if (this.failure) throw this.failure;
      if (this.host.closed()) {
        if (whenClosed) throw whenClosed();
        return;
      }
      return work();
    });
    this.mailbox = run.catch(() => undefined).finally(() => this.queued--);
    return run;
  }

  // Write-ahead: nothing of a macrostep is acted on before its records are in the journal.
  private async write(records: JournalRecord[]): Promise<void> {
    try {
      await this.host.journal.append(this.executionId, this.head, records, this.subject);
    } catch (error) {
      this.failure = error;
      this.halt();
      this.host.failed(this, error);
      throw error;
    }
    this.moved(records);
  }

  // An internal step's control records (StepCall.appendControl), written between two macrosteps: a refused
  // write fails the step, not the execution. Replay skips control records, so the log stays replayable.
  private async appendControl(partials: readonly UnstampedRecord[]): Promise<number> {
    if (partials.length === 0) return this.head;
    const at = this.host.clock.now();
    const records = partials.map((partial, i): JournalRecord => ({ seq: this.head + 1 + i, at, ...partial }));
    await this.host.journal.append(this.executionId, this.head, records, this.subject);
    this.moved(records);
    return this.head;
  }

  private moved(records: JournalRecord[]): void {
    this.head = records.at(-1)!.seq;
    this.host.bus.emit("append", { executionId: this.executionId, records });
  }

  private apply(step: Macrostep, emitted: readonly AnyEventObject[]): void {
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
    for (const childId of step.sourcesStopped) this.liveSources?.stop(childId);
    if (!this.ended)
      for (const { childId, logic, spec } of step.sourcesStarted)
        this.sources.start(childId, logic, spec.input, spec.syncSnapshot === true);
    for (const { childId, event } of step.sourceSends) this.liveSources?.send(childId, event);
    // After the steps it started (a child it spawned and sends to exists to receive), even from a final macrostep.
    this.sendMessages(step.messages);
    if (step.stoppedChildren.length > 0)
      this.stopChildren(step.stoppedChildren, "its parent left the state that ran it");
    // XState delivers emitted events deferred: after the snapshot is set, before its observers see it.
    if (this.listeners)
      for (const event of emitted)
        this.listeners.deliver(event, (error) =>
          this.host.warn({ code: WARNING_CODES.listenerFailed, message: String(error), executionId: this.executionId }),
        );
    this.observers.macrostep(step);
    this.observers.notify(this.getSnapshot(), this.ended);
    this.maybeSnapshot();
    if (this.ended) this.host.ended(this);
    this.wakeSettled();
  }

  private runEffect(pending: PendingStep): void {
    const controller = new AbortController();
    this.running.set(pending.childId, controller);
    this.inflight++;
    const child = childSpecOf(pending);
    if (child) this.childRuns.set(pending.childId, child.executionId);
    const { executionId, subject, machine: logic } = this;
    const call: StepCall = {
      executionId,
      ...(subject === undefined ? {} : { subject }),
      logic,
      pending,
      signal: controller.signal,
      abort: (reason) => controller.abort(reason),
      appendControl: (records) => this.appendControl(records),
    };
    runStepToRecord(this.host, call)
      .then((record) => {
        // An aborted step (state left, execution stopped or halted) journals nothing: its outcome is not wanted.
        if (this.running.get(pending.childId) !== controller) return;
        this.running.delete(pending.childId);
        return this.enqueue(record);
      })
      .catch(() => undefined)
      .finally(() => {
        this.inflight--;
        if (child && this.childRuns.get(pending.childId) === child.executionId) this.childRuns.delete(pending.childId);
        this.wakeSettled();
      });
  }

  private armTimer(timerId: string): void {
    const timer = this.state.timers[timerId];
    if (!timer) return;
    this.timerCancels.get(timerId)?.();
    const cancel = this.host.clock.setTimer(() => {
      this.timerCancels.delete(timerId);
      this.enqueue({ type: EVENT_RECEIVED, event: timer.event, timerId })
        .catch(() => undefined)
        .finally(() => this.wakeSettled());
    }, timer.dueAt - this.host.clock.now());
    this.timerCancels.set(timerId, cancel);
  }

  /** A snapshot at the head once `every` records passed since the last one (1 at a clean close: RunningExecutions.close); settles once written or warned. */
  maybeSnapshot(every = this.host.snapshotEvery): Promise<void> | undefined {
    if (!every || this.head - this.snapshotSeq < every || this.failure) return;
    this.snapshotSeq = this.head;
    const snapshot = { seq: this.head, at: this.host.clock.now(), state: this.persistedState() };
    // A snapshot is a cache of the log: a failed write costs a longer replay, never data.
    return this.host.journal.putSnapshot(this.executionId, snapshot, this.subject).catch((error) =>
      this.host.warn({
        code: WARNING_CODES.snapshot,
        message: error instanceof Error ? error.message : String(error),
      }),
    );
  }

  private wakeSettled(): void {
    this.wakes++;
    for (const waiter of this.settledWaiters.splice(0)) waiter.resolve();
  }
}

/** The child executions among pending steps (their ids). */
function childExecutions(pending: Record<string, PendingStep>): string[] {
  return Object.values(pending).flatMap((step) => childSpecOf(step)?.executionId ?? []);
}
