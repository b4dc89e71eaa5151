// Callback and observable actors under the runtime (ADR 0012 D7): live sources, not executions. A parent's execution
// starts one once the macrostep that invoked it is durable, with a stand-in parent whose receiving end journals what
// the source sends (sendBack, an observable's completion or error, its snapshots for onSnapshot) as the parent's
// event, write-ahead; what the parent sends it (sendTo) reaches it live. It is stopped when its state is left or the
// execution ends, and started again after a resume: its own side effects are at least once, like an effect's.
import { createActor, createEmptyActor, type AnyActorLogic, type AnyActorRef, type AnyEventObject } from "xstate";

/** What a parent execution hears from its live sources. */
export type SourceListener = (childId: string, event: AnyEventObject) => void;

export class LiveSources {
  private readonly running = new Map<string, AnyActorRef>();

  constructor(private readonly heard: SourceListener) {}

  /** Starts `logic` as the live source `childId` (a no-op when it runs already, or for what is not actor logic). */
  start(childId: string, logic: unknown, input: unknown, syncSnapshot: boolean): void {
    if (this.running.has(childId) || !isActorLogic(logic)) return;
    const parent = createEmptyActor();
    // XState relays a child's sendBack, done, error and snapshot events to its parent's _send.
    Object.assign(parent, { _send: (event: AnyEventObject) => this.heard(childId, event) });
    // syncSnapshot is an option XState's own invoke passes (onSnapshot); not in the public options' type.
    const options = { id: childId, parent, input, syncSnapshot };
    const actor = createActor(logic, options);
    this.running.set(childId, actor);
    actor.start();
  }

  /** Delivers a parent's sendTo to a running source, live (the send is journaled in the parent's transition). */
  send(childId: string, event: AnyEventObject): void {
    this.running.get(childId)?.send(event);
  }

  /** True while `childId` runs here. */
  has(childId: string): boolean {
    return this.running.has(childId);
  }

  stop(childId: string): void {
    const actor = this.running.get(childId);
    this.running.delete(childId);
    if (!actor) return;
    // XState lets only a root be stopped from outside: the stand-in parent is let go first (nothing relays after).
    Object.assign(actor, { _parent: undefined });
    actor.stop();
  }

  stopAll(): void {
    for (const childId of [...this.running.keys()]) this.stop(childId);
  }
}

function isActorLogic(logic: unknown): logic is AnyActorLogic {
  return (
    typeof logic === "object" &&
    logic !== null &&
    "transition" in logic &&
    typeof logic.transition === "function" &&
    "getInitialSnapshot" in logic &&
    typeof logic.getInitialSnapshot === "function"
  );
}
