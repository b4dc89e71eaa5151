// The actor a caller holds: getSnapshot / subscribe / send like an XState actor, so @xstate/react
// selectors and the inspector work with a journaled execution.
import type {
  AnyEventObject,
  AnyMachineSnapshot,
  AnyStateMachine,
  EventObject,
  Observer,
  SnapshotFrom,
  Subscription,
} from "xstate";
import type { Warning } from "../bus.js";
import { WARNING_CODES } from "../constants.js";
import { RUNTIME_ID_PREFIX, TOOL_APPROVAL_EVENT } from "../../machines/helpers/constants.js";
import { checkApprovalShape, checkApprovalWaiting } from "../agents/approvals.js";
import { AppClosedError, ConfigError } from "../errors.js";
import { plainExternalEvent } from "./externalEvents.js";
import type { ReplayReport } from "./host.js";
import type { ToolApprovalEvent } from "../../machines/helpers/messages.js";

/** What an actor needs of the app that made it: its warning sink (a send that is not journaled is a warning). */
export interface ActorHost {
  warn(warning: Warning): void;
  /** A decision for a call that waits in a child execution (a sub-agent's): delivered there; its id, or undefined (./../agents/approvals.ts routeApproval). */
  routeApproval?(executionId: string, decision: ToolApprovalEvent): Promise<string | undefined>;
}

/** The execution an actor stands for (an Execution, which creates its actor as its `ref`). */
export interface ActorSource<TLogic extends AnyStateMachine = AnyStateMachine> {
  readonly executionId: string;
  readonly sessionId: string;
  readonly machine: TLogic;
  readonly replay: ReplayReport;
  getSnapshot(): SnapshotFrom<TLogic>;
  subscribe(observer: Observer<SnapshotFrom<TLogic>> | ((snapshot: SnapshotFrom<TLogic>) => void)): Subscription;
  /**
   * Journals `event` and delivers it, in the execution's turn. `admit`, when given, is called in that turn
   * with the snapshot every earlier event left, before anything is written: a throw refuses the event.
   */
  send(event: EventObject, admit?: (snapshot: SnapshotFrom<TLogic>) => void): Promise<void>;
  whenSettled(): Promise<void>;
  /** Listens to emitted events (an execution); absent: the source emits none. */
  on?(type: string, handler: (event: AnyEventObject) => void): Subscription;
}

/**
 * A journaled execution as an XState-like actor: `getSnapshot`, `subscribe`, `send`. Typed by its logic:
 * `app.start(machine, ...)` gives a `JournaledActor<typeof machine>`, whose snapshots have the machine's context.
 */
export class JournaledActor<TLogic extends AnyStateMachine = AnyStateMachine> {
  /** The execution id; also the actor's id. */
  readonly id: string;
  readonly sessionId: string;
  readonly logic: TLogic;
  readonly src: string;

  constructor(
    private readonly execution: ActorSource<TLogic>,
    private readonly host?: ActorHost,
  ) {
    this.id = execution.executionId;
    this.sessionId = execution.sessionId;
    this.logic = execution.machine;
    this.src = execution.machine.id;
  }

  get executionId(): string {
    return this.execution.executionId;
  }

  /** The current snapshot: the same object until the state changes (as `useSyncExternalStore` needs). */
  getSnapshot(): SnapshotFrom<TLogic> {
    return this.execution.getSnapshot();
  }

  subscribe(observer: Observer<SnapshotFrom<TLogic>> | ((snapshot: SnapshotFrom<TLogic>) => void)): Subscription {
    return this.execution.subscribe(observer);
  }

  /**
   * Journals the event, then delivers it. Fire-and-forget like XState's send: it never throws. An event
   * that is not journaled (the app is closed, the event is refused as `sendAsync` lists, the store refused
   * the write) is reported through `observability.onWarn` (`LOOM_APP_CLOSED` / `LOOM_SEND_FAILED`, with
   * `executionId`, `eventType` and the error's `errorCode`), never dropped silently. `sendAsync` rejects instead.
   */
  send(event: AnyEventObject): void {
    this.deliver(event).catch((error: unknown) => {
      const closed = error instanceof AppClosedError;
      const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
      this.host?.warn({
        code: closed ? WARNING_CODES.appClosed : WARNING_CODES.sendFailed,
        message: `actor.send(${JSON.stringify(eventTypeOf(event))}) to execution "${this.id}" was not journaled: ${error instanceof Error ? error.message : String(error)}`,
        executionId: this.id,
        eventType: eventTypeOf(event),
        ...(typeof code === "string" ? { errorCode: code } : {}),
      });
    });
  }

  /**
   * Resolves once the event is journaled and processed; rejects, journaling nothing, if it is refused:
   * ConfigError (`send.event`) for an event that is not an object with a string `type` or not plain JSON
   * (naming the path inside it); ReservedEventError for a type reserved for XState or the runtime
   * (`xstate.*`, `@xstate.*`, `loom.*`); ApprovalMalformedError for a TOOL_APPROVAL without a string
   * `toolCallId` and a boolean `approved`; ApprovalNotWaitingError for a decision on a call that is not
   * waiting (decided already, unknown, the execution ended); AppClosedError once the app is closed.
   */
  sendAsync(event: AnyEventObject): Promise<void> {
    return this.deliver(event);
  }

  private deliver(event: AnyEventObject): Promise<void> {
    // Refused before the execution's mailbox: a bad event is the caller's error and leaves the execution running.
    // The runtime's own executions (the sweep, the erase coordinator) take no event from outside: their log is an audit trail.
    if (this.logic.id.startsWith(RUNTIME_ID_PREFIX)) {
      return Promise.reject(
        new ConfigError(
          "send.executionId",
          `execution "${this.id}" runs the runtime's own logic "${this.logic.id}", which takes no events from outside; nothing was journaled.`,
        ),
      );
    }
    let plain: AnyEventObject;
    try {
      plain = plainExternalEvent(event, this.id);
    } catch (error) {
      return Promise.reject(error);
    }
    if (plain.type !== TOOL_APPROVAL_EVENT) return this.execution.send(plain);
    // Whether the call waits is decided in the execution's turn: two decisions sent at once see each other.
    const decision = checkApprovalShape(plain, this.id);
    const send = () => this.execution.send(plain, (snapshot) => checkApprovalWaiting(snapshot, decision, this.id));
    // A tree (issue 34): a call that waits in a child execution is decided there, by the id the root was sent. The
    // execution's own parked call is sent at once, in order with what is sent after it (its turn checks it again).
    const route = this.host?.routeApproval;
    const own: AnyMachineSnapshot = this.execution.getSnapshot();
    if (!route || (own.status === "active" && own.can(decision))) return send();
    return route.call(this.host, this.id, decision).then((to) => (to === undefined ? send() : undefined));
  }

  /**
   * Listens to the events the machine's `emit()` emits, as XState's `actor.on(type | "*", handler)`: those of
   * live transitions, once each macrostep is durable. Replayed transitions (a resume) emit nothing again, and
   * a listener subscribed after `app.start` returned misses what the initial state emitted.
   */
  on(type: string, handler: (event: AnyEventObject) => void): Subscription {
    return this.execution.on?.(type, handler) ?? { unsubscribe: () => undefined };
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

function eventTypeOf(event: unknown): string | undefined {
  return typeof event === "object" && event !== null && "type" in event && typeof event.type === "string"
    ? event.type
    : undefined;
}
