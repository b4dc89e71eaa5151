// The actions a macrostep runs live, as XState's actor runs them (ADR 0012 D7): custom actions and log(), in
// order, then the events emit() emits. The planner keeps them (pure: it only collects what XState's
// transition handed its actionExecutor); the execution runs them once its macrostep is durable, and replay
// never does (as XState does not re-run actions when it restores a snapshot). The built-in actions the
// runtime carries out itself (assign, raise, spawnChild, stopChild, sendTo, cancel) are not among them.
import type { AnyEventObject } from "xstate";

/** An action XState's transition collected: its type, the arguments it runs with, its implementation. */
export interface CollectedAction {
  type: string;
  info?: unknown;
  params?: unknown;
  exec?: ((info: any, params: any) => void) | undefined;
}

const LOG = "xstate.log";
const EMIT = "xstate.emit";

/** True for an action the execution runs live: log(), emit(), or a custom action with an implementation. */
export function isLiveAction(action: CollectedAction): boolean {
  if (action.type === LOG || action.type === EMIT) return true;
  return !action.type.startsWith("xstate.") && typeof action.exec === "function";
}

/**
 * Runs the custom actions and log()s of a macrostep in order, and returns the events its emit()s emit (XState
 * delivers them deferred: after the snapshot is set, before observers see it). A throw of an action
 * propagates: the actions after it do not run, as on XState.
 */
export function runLiveActions(actions: readonly CollectedAction[]): AnyEventObject[] {
  const emitted: AnyEventObject[] = [];
  for (const action of actions) {
    const params: { label?: unknown; value?: unknown; event?: AnyEventObject } =
      typeof action.params === "object" && action.params !== null ? action.params : {};
    if (action.type === LOG) {
      // XState's default logger is console.log, read when it logs.
      if (params.label) console.log(params.label, params.value);
      else console.log(params.value);
    } else if (action.type === EMIT) {
      if (params.event) emitted.push(params.event);
    } else action.exec?.(action.info, action.params);
  }
  return emitted;
}

type Handler = (event: AnyEventObject) => void;

/** The `actor.on(type | "*", handler)` listeners of one actor, as XState's actor keeps them. */
export class EmittedListeners {
  private readonly byType = new Map<string, Set<Handler>>();

  on(type: string, handler: Handler): { unsubscribe(): void } {
    const set = this.byType.get(type) ?? new Set();
    this.byType.set(type, set);
    // A wrapper per subscription (as XState's): the same handler subscribed twice is called twice, unsubscribed once each.
    const wrapped: Handler = (event) => handler(event);
    set.add(wrapped);
    return { unsubscribe: () => set.delete(wrapped) };
  }

  /** Calls the listeners of `event.type`, then the wildcard ones; a throwing listener is handed to `failed`. */
  deliver(event: AnyEventObject, failed: (error: unknown) => void): void {
    for (const handler of [...(this.byType.get(event.type) ?? []), ...(this.byType.get("*") ?? [])]) {
      try {
        handler(event);
      } catch (error) {
        failed(error);
      }
    }
  }
}
