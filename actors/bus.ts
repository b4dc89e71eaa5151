// The runtime's typed event bus (nanoevents): what tools, UIs and tests can listen to.
import { createNanoEvents, type Emitter } from "nanoevents";
import type { ChainLayer, ChainOutcome } from "../machines/effectChain.js";
import type { Usage } from "../machines/helpers/messages.js";
import type { JournalRecord } from "../stores/types.js";
import type { ModelDelta } from "./agents/deltas.js";
import { WARNING_CODES } from "./constants.js";

/** A report that never fails a run: state growth, a failed snapshot, a throwing hook. */
export interface Warning {
  code: string;
  message: string;
  executionId?: string;
  [fact: string]: unknown;
}

/** The runtime's event bus: what `app.on(event, listener)` can listen to. */
export interface RuntimeEvents {
  /** Records were appended (after the write is durable). */
  append(event: { executionId: string; records: JournalRecord[] }): void;
  /**
   * An effect step finished running live through the chain (never for a step served from the log):
   * how it ended, the model usage of a completed llm step, and the innermost layer a failed one reached.
   */
  step(event: {
    executionId: string;
    stepId: string;
    effectId: string;
    ok: boolean;
    durationMs: number;
    outcome?: ChainOutcome;
    usage?: Usage;
    stoppedAt?: ChainLayer;
  }): void;
  warn(warning: Warning): void;
  /** A live model step reported a delta (text, reasoning, tool input): never journaled; `app.stream` serves them. */
  delta(event: { executionId: string; stepId: string; delta: ModelDelta }): void;
  /** An execution ended (done, error or stopped). */
  ended(event: { executionId: string; status: string }): void;
  /** Progress of long work (sweep, erase, replay). */
  progress(event: { task: string; done: number; total?: number }): void;
  /** A claim-check offload happened. */
  offload(event: { executionId: string; stepId: string; address: string; size: number }): void;
}

export type RuntimeBus = Emitter<RuntimeEvents>;

/** Each event's listener, spelled over its parameters so that one of a generic event takes that event's arguments. */
type EventListeners = { [E in keyof RuntimeEvents]: (...a: Parameters<RuntimeEvents[E]>) => void };

/**
 * The app's bus. A listener that throws never fails the run (the bus is emitted from inside the write
 * path): its error goes to `onListenerError`, and the other listeners still run.
 */
export function createBus(onListenerError?: (error: unknown, event: keyof RuntimeEvents) => void): RuntimeBus {
  const bus = createNanoEvents<RuntimeEvents>();
  bus.emit = function emit<K extends keyof RuntimeEvents>(
    this: RuntimeBus,
    event: K,
    ...args: Parameters<RuntimeEvents[K]>
  ) {
    const listeners: EventListeners[K][] = this.events[event] ?? [];
    for (const listener of [...listeners]) {
      try {
        listener(...args);
      } catch (error) {
        onListenerError?.(error, event);
      }
    }
  };
  return bus;
}

// Messages already given to the process warning channel with `once`.
const reported = new Set<string>();

/**
 * The process warning channel (`process.emitWarning`; `console.warn` where there is no process, as in
 * browsers): where a warning goes when no `onWarn` sink takes it, or the sink threw. With `once`, a
 * message already reported this way is not reported again.
 */
export function processWarning(
  message: string,
  code: string = WARNING_CODES.warning,
  options: { once?: boolean } = {},
): void {
  if (options.once) {
    if (reported.has(message)) return;
    reported.add(message);
  }
  // Typed as possibly absent: there is no process in browsers (reading it there gives undefined).
  const proc: { emitWarning?: (m: string, o: { code: string }) => void } | undefined = globalThis.process;
  if (proc?.emitWarning) proc.emitWarning(message, { code });
  else console.warn(`[${code}] ${message}`);
}
