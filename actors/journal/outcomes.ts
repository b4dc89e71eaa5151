// What app.result waits on: one outcome promise per execution the app runs, and the journaled outcomes
// of ended executions, kept in a bounded cache (oldest evicted) so an ended execution's state is not.
import { ExecutionFailedError, ExecutionStoppedError, type SerializedError } from "../errors.js";
import type { HostedExecution } from "./host.js";

/** What the app keeps of an ended execution: its journaled outcome, and its subject. */
export interface SettledOutcome {
  status: string;
  output?: unknown;
  error?: SerializedError;
  subject?: string;
}

interface Outcome {
  promise: Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class Outcomes {
  private readonly waiting = new Map<string, Outcome>();
  // Oldest first: a Map iterates in insertion order, so eviction takes from its front.
  private readonly settled = new Map<string, SettledOutcome>();

  /** @param limit how many ended executions' outcomes to keep (`execution.settledCache`); 0 keeps none. */
  constructor(private readonly limit: number) {}

  /** The promise the execution's outcome settles (created on first ask; its rejection is never unhandled). */
  promise(executionId: string): Promise<unknown> {
    return this.outcomeOf(executionId).promise;
  }

  /** Starts waiting for the outcome of a run of `executionId`; `fresh` drops an earlier run's (a resume). */
  open(executionId: string, fresh = false): void {
    if (fresh) this.waiting.delete(executionId);
    this.outcomeOf(executionId);
  }

  reject(executionId: string, error: unknown): void {
    this.outcomeOf(executionId).reject(error);
  }

  /** The execution ended: its outcome settles from its state, and is kept (bounded) in place of the state. */
  settle(execution: HostedExecution): void {
    const { executionId } = execution;
    const { status, output, error } = execution.state;
    const outcome = this.outcomeOf(executionId);
    if (status === "done") outcome.resolve(output);
    else if (status === "stopped") outcome.reject(new ExecutionStoppedError(executionId, error?.message ?? "stopped"));
    else outcome.reject(new ExecutionFailedError(executionId, error ?? { name: "Error", message: "unknown" }));
    this.forget(executionId);
    if (this.limit === 0) return;
    this.settled.set(executionId, {
      status,
      ...(output === undefined ? {} : { output }),
      ...(error === undefined ? {} : { error }),
      ...(execution.subject === undefined ? {} : { subject: execution.subject }),
    });
    for (const oldest of this.settled.keys()) {
      if (this.settled.size <= this.limit) break;
      this.settled.delete(oldest);
    }
  }

  settledOf(executionId: string): SettledOutcome | undefined {
    return this.settled.get(executionId);
  }

  /** The ids of the kept outcomes of `subject`'s executions. */
  settledOfSubject(subject: string): string[] {
    return [...this.settled].filter(([, settled]) => settled.subject === subject).map(([id]) => id);
  }

  forget(executionId: string): void {
    this.waiting.delete(executionId);
    this.settled.delete(executionId);
  }

  clear(): void {
    this.waiting.clear();
    this.settled.clear();
  }

  private outcomeOf(executionId: string): Outcome {
    let outcome = this.waiting.get(executionId);
    if (!outcome) {
      let resolve!: (value: unknown) => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<unknown>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => undefined);
      outcome = { promise, resolve, reject };
      this.waiting.set(executionId, outcome);
    }
    return outcome;
  }
}

/** app.result's answer from an ended execution's journaled outcome: its output, or the error it ended with. */
export function outcomeFrom(
  executionId: string,
  ended: { status?: unknown; output?: unknown; error?: SerializedError | undefined },
): unknown {
  const error = ended.error;
  if (ended.status === "done") return ended.output;
  if (ended.status === "stopped") throw new ExecutionStoppedError(executionId, error?.message ?? "stopped");
  throw new ExecutionFailedError(executionId, error ?? { name: "Error", message: "unknown" });
}
