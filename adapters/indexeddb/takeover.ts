// Opt-in takeover across tabs: a tab that watches an execution another tab runs queues for its writer lock, and
// when the owner lets go (its run ended, or the tab closed or crashed mid-run) resumes it if it is unfinished.
import type { EventStore } from "../../stores/types.js";
import type { AcquireWriterOptions, WriterLease } from "./locks.js";

/** Options of `takeOverWhenReleased`. */
export interface TakeOverOptions {
  /** Stops waiting for the lock; the returned promise then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Waits for the writer lock of `executionId` (queued behind the tab that runs it), then, if the execution is
 * still unfinished, resumes it with `app.resume` under that lock; resolves with what `app.resume` returned, or
 * undefined when the execution had ended (or does not exist). The resume replays the journal: no recorded
 * call runs again. Call it from a tab that only watches, for each execution it sees running elsewhere.
 *
 * @example
 * const actor = await takeOverWhenReleased(stores, app, executionId);
 * if (actor) console.log("this tab runs it now");
 */
export async function takeOverWhenReleased<A>(
  stores: {
    events: Pick<EventStore, "getExecution">;
    acquireWriter(executionId: string, options: Omit<AcquireWriterOptions, "locks">): Promise<WriterLease>;
  },
  app: { resume(executionId: string): Promise<A> },
  executionId: string,
  options: TakeOverOptions = {},
): Promise<A | undefined> {
  const lease = await stores.acquireWriter(executionId, {
    wait: true,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  try {
    const info = await stores.events.getExecution(executionId);
    if (info?.status !== "running") return undefined;
    // The lease (taken with wait) is lent to the runtime's own acquisition: the lock stays held until the run ends.
    return await app.resume(executionId);
  } finally {
    await lease.release();
  }
}
