// The actor a caller holds: getSnapshot / subscribe / send like an XState actor, so @xstate/react
// selectors and the inspector work with a journaled execution.
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine, Observer, Subscription } from "xstate";
import type { Execution, ReplayReport } from "./execution.js";

/** A journaled execution as an XState-like actor: `getSnapshot`, `subscribe`, `send`. */
export class JournaledActor {
  /** The execution id; also the actor's id. */
  readonly id: string;
  readonly sessionId: string;
  readonly logic: AnyStateMachine;
  readonly src: string;

  constructor(private readonly execution: Execution) {
    this.id = execution.executionId;
    this.sessionId = execution.sessionId;
    this.logic = execution.machine;
    this.src = execution.machine.id;
  }

  get executionId(): string {
    return this.execution.executionId;
  }

  getSnapshot(): AnyMachineSnapshot {
    return this.execution.getSnapshot();
  }

  subscribe(observer: Observer<AnyMachineSnapshot> | ((snapshot: AnyMachineSnapshot) => void)): Subscription {
    return this.execution.subscribe(observer);
  }

  /** Journals the event, then delivers it. Fire-and-forget like XState's send; `sendAsync` awaits the write. */
  send(event: AnyEventObject): void {
    this.execution.send(event).catch(() => undefined);
  }

  /** Resolves once the event is journaled and processed; rejects if the journal refused it. */
  sendAsync(event: AnyEventObject): Promise<void> {
    return this.execution.send(event);
  }

  /** What the resume that produced this actor replayed (zeros for a fresh start). */
  get replay(): ReplayReport {
    return { ...this.execution.replay };
  }

  /** Resolves when no event or effect is in flight (or the execution ended); armed timers do not count. */
  settled(): Promise<void> {
    return this.execution.whenSettled();
  }
}
