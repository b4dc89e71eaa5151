// What an Execution needs from its app: the seam between one journaled actor and the app that hosts it.
import type { InspectionEvent } from "xstate";
import type { RuntimeBus } from "../bus.js";
import type { Clock } from "../clock.js";
import type { Execution } from "./execution.js";
import type { Journal } from "./journal.js";
import type { PendingStep } from "./planner.js";
import type { JournaledActor } from "./actor.js";

export interface Runtime {
  readonly journal: Journal;
  readonly clock: Clock;
  readonly bus: RuntimeBus;
  readonly effectIds: ReadonlySet<string>;
  readonly snapshotEvery: number | false;
  readonly closed: boolean;
  /** Runs one effect step live, through the middleware chain. */
  runStep(execution: Execution, pending: PendingStep, signal: AbortSignal): Promise<unknown>;
  executionEnded(execution: Execution): void;
  executionFailed(execution: Execution, error: unknown): void;
  warn(code: string, error: unknown, facts?: Record<string, unknown>): void;
  inspect(event: InspectionEvent): void;
  actorRefOf(execution: Execution): JournaledActor;
  /** Called after every macrostep, live or replayed (the agent loop's state-growth warning hangs here). */
  afterMacrostep(execution: Execution): void;
}
