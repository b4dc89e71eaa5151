// Opt-in takeover across tabs: a tab that watches an execution another tab runs queues for its writer lock, and
// when the owner lets go (its run ended, or the tab closed or crashed mid-run) resumes it if it is unfinished.
import { WriterLockedError } from "../../stores/errors.js";
import type { EventStore } from "../../stores/types.js";
import type { AcquireWriterOptions, WriterLease } from "./locks.js";

/** Options of `takeOverWhenReleased`. */
export interface TakeOverOptions {
  /** Stops waiting for the lock; the returned promise then rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * How long to leave a released lock alone before taking over, so that a tab that reloads (it lets the lock go
   * and takes it again as it resumes on load) keeps its run; a tab that closed is taken over after this delay.
   * @defaultValue 0
   */
  graceMs?: number;
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
  const signal = options.signal ? { signal: options.signal } : {};
  const graceMs = options.graceMs ?? 0;
  for (;;) {
    let lease = await stores.acquireWriter(executionId, { wait: true, ...signal });
    if (graceMs > 0) {
      if (!(await unfinished(stores, executionId))) return lease.release().then(() => undefined);
      await lease.release();
      await delay(graceMs, options.signal);
      try {
        lease = await stores.acquireWriter(executionId, { lend: true });
      } catch (error) {
        if (error instanceof WriterLockedError) continue; // its tab came back (a reload): wait for it again
        throw error;
      }
    }
    try {
      if (!(await unfinished(stores, executionId))) return undefined;
      // The lease is lent to the runtime's own acquisition: the lock stays held until the run ends.
      return await app.resume(executionId);
    } finally {
      await lease.release();
    }
  }
}

async function unfinished(stores: { events: Pick<EventStore, "getExecution"> }, executionId: string): Promise<boolean> {
  return (await stores.events.getExecution(executionId))?.status === "running";
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });
}
