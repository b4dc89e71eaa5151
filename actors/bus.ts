// The runtime's typed event bus (nanoevents): what tools, UIs and tests can listen to.
import { createNanoEvents, type Emitter } from "nanoevents";
import type { JournalRecord } from "../stores/types.js";

/** A report that never fails a run: state growth, a failed snapshot, a throwing hook. */
export interface Warning {
  code: string;
  message: string;
  executionId?: string;
  [fact: string]: unknown;
}

export interface RuntimeEvents {
  /** Records were appended (after the write is durable). */
  append(event: { executionId: string; records: JournalRecord[] }): void;
  /** An effect step finished running live (never for a step served from the log). */
  step(event: { executionId: string; stepId: string; effectId: string; ok: boolean; durationMs: number; usage?: unknown; stoppedAt?: string }): void;
  warn(warning: Warning): void;
  /** An execution ended (done, error or stopped). */
  ended(event: { executionId: string; status: string }): void;
  /** Progress of long work (sweep, erase, replay). */
  progress(event: { task: string; done: number; total?: number }): void;
  /** A claim-check offload happened. */
  offload(event: { executionId: string; stepId: string; address: string; size: number }): void;
}

export type RuntimeBus = Emitter<RuntimeEvents>;

export function createBus(): RuntimeBus {
  return createNanoEvents<RuntimeEvents>();
}
