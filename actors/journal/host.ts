// The port an Execution runs on: what one journaled execution needs from whatever hosts it (the app),
// given to it once. The execution calls nothing of its host by name beyond this interface.
import type { AnyMachineSnapshot, AnyStateMachine, EventObject, InspectionEvent } from "xstate";
import type { RecordBody } from "../../stores/types.js";
import type { RuntimeBus, Warning } from "../bus.js";
import type { Clock } from "../clock.js";
import type { SerializedError } from "../errors.js";
import type { Journal } from "./journal.js";
import type { PendingStep } from "./planner.js";
import type { TreeAddress, TreeMessage } from "./children.js";
import type { ToolApprovalEvent } from "../../machines/helpers/messages.js";

/** A record as a step or macrostep asks for it: the execution gives it its `seq` and `at`. */
export type UnstampedRecord = RecordBody;

/**
 * One live run of a pending step, as the step runner receives it: whose step it is, the step, and the
 * signal that is aborted once its outcome is no longer wanted (its state was left, the execution stopped).
 */
export interface StepCall {
  readonly executionId: string;
  readonly subject?: string;
  /** The machine that invoked the step (its id is the logic id; the agent loop's tool frames are told from it). */
  readonly logic: AnyStateMachine;
  readonly pending: PendingStep;
  readonly signal: AbortSignal;
  /** Aborts `signal` (the execution's own controller of the step): how `app.stop` reaches a step in the chain without a second controller per step. */
  readonly abort?: (reason: unknown) => void;
  /**
   * Journals control records in this execution's log while the step runs, and resolves the seq of the
   * last. Only the runtime's internal steps use it: their machines run one step at a time and take no
   * events, so nothing else appends meanwhile and the step's outcome follows at the next seq.
   */
  appendControl(records: readonly UnstampedRecord[]): Promise<number>;
}

/** What an execution reports of itself when it ends or fails (the execution object itself satisfies it). */
export interface HostedExecution {
  readonly executionId: string;
  readonly subject: string | undefined;
  readonly state: { status: string; output?: unknown; error?: SerializedError };
}

/** What a resume replayed: the numbers a story or the CLI prints. */
export interface ReplayReport {
  fromSnapshotSeq: number;
  recordsReplayed: number;
  stepsServedFromLog: number;
  stepsToRun: number;
}

/**
 * Called after every macrostep, live or replayed, with the snapshot it reached and the run's facts (the
 * agent loop's state-growth warning): given to an execution when it is created, for its logic.
 */
export type MacrostepObserver = (
  snapshot: AnyMachineSnapshot,
  run: { executionId: string; warned: Set<string> },
) => void;

export interface ExecutionHost {
  readonly journal: Journal;
  readonly clock: Clock;
  readonly bus: RuntimeBus;
  readonly effectIds: ReadonlySet<string>;
  readonly snapshotEvery: number | false;
  /** `execution.checkDeterminism`: each TRANSITION journals a digest of the context (absent: false). */
  readonly checkDeterminism?: boolean;
  /** `execution.children.maxFanOut` (absent: the default). */
  readonly maxFanOut?: number;
  /** True once the host is closed: queued work is dropped, a queued send is refused. */
  closed(): boolean;
  /** Runs one step live (the effect chain, or the runtime's internal step runner). */
  runStep(call: StepCall): Promise<unknown>;
  /** The execution journaled its EXECUTION_ENDED. */
  ended(execution: HostedExecution): void;
  /** The journal refused a write of the execution; it accepts nothing more. */
  failed(execution: HostedExecution, error: unknown): void;
  /** A report that never fails the run (a failed snapshot, a throwing subscriber or send). */
  warn(warning: Warning): void;
  /** Hands XState inspection events to `observability.inspect`, in order (a throwing inspector is a warning). */
  inspect(...events: InspectionEvent[]): void;
  /** True when `observability.inspect` is set: without it an execution builds no inspection events at all. */
  readonly inspecting: boolean;
  /**
   * Journals a message of the tree (ADR 0012 D4) in its receiver's log, write-ahead; resolves once journaled there,
   * or dropped (the receiver ended, or is unknown); rejects when it could not be delivered now (a recovery re-sends it).
   */
  deliver(message: TreeMessage, from: string): Promise<void>;
  /** What a live custom action sends through a tree ref: to the actor's execution or live source, at once (ExecutionTree.sendLive). */
  sendLive(address: TreeAddress, event: EventObject): Promise<void>;
  /** Resolves once the child execution is settled (ExecutionHost's whenSettled): true while it still runs, false once it ended or is unknown. */
  childSettled(executionId: string): Promise<boolean>;
  /** Stops a child execution, journaled in its log (and its own children with it); a no-op once it ended. */
  stopChild(executionId: string, reason: string): Promise<void>;
  /** A decision for a call that waits in a child execution: delivered there; its id, or undefined when none waits for it. */
  routeApproval?(executionId: string, decision: ToolApprovalEvent): Promise<string | undefined>;
}
