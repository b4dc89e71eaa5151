// One writer per execution across tabs, with the Web Locks API. The lock only spares a second tab
// wasted work and ConcurrencyErrors: correctness never depends on it. The expected-seq fence checked
// inside every append transaction stays the real guard, so where `navigator.locks` is missing (old
// browsers, Node, some workers) acquiring degrades to a non-exclusive lease and the fence alone decides.
import { WriterLockedError } from "../../stores/errors.js";

/** The part of the Web Locks `LockManager` used here; `navigator.locks` satisfies it. */
export interface LockManagerLike {
  request(
    name: string,
    options: { mode?: "exclusive" | "shared"; ifAvailable?: boolean; signal?: AbortSignal },
    callback: (lock: unknown) => unknown,
  ): Promise<unknown>;
}

/** Options of `acquireWriter`: wait for the lock, or fail fast. */
export interface AcquireWriterOptions {
  /** Wait until the current holder releases (or its tab closes) instead of refusing at once. @defaultValue false */
  wait?: boolean;
  /** Gives up a waiting request; the returned promise then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The lock manager; `null` forces the degraded mode. @defaultValue navigator.locks when present */
  locks?: LockManagerLike | null;
}

/** A held writer lock. */
export interface WriterLease {
  /** The Web Locks resource name, `loomwork:<database>:<executionId>`. */
  readonly resource: string;
  /** False when no lock manager exists: nothing is held and the seq fence alone guards the log. */
  readonly exclusive: boolean;
  /** Lets the next waiter in; idempotent. Closing the tab releases too. */
  release(): Promise<void>;
}

/** The Web Locks resource guarding one execution of one database. */
export function writerLockName(database: string, executionId: string): string {
  return `loomwork:${database}:${executionId}`;
}

function defaultLocks(): LockManagerLike | undefined {
  const scope = globalThis as { navigator?: { locks?: LockManagerLike } };
  return scope.navigator?.locks;
}

/**
 * Becomes the single writer of `executionId` in database `database` across tabs and workers of the
 * origin. Without `wait` it refuses with WriterLockedError when another holder exists.
 *
 * @example
 * const lease = await acquireWriter("my-app", executionId, { wait: true });
 * try { await resume(executionId); } finally { await lease.release(); }
 */
export function acquireWriter(
  database: string,
  executionId: string,
  options: AcquireWriterOptions = {},
): Promise<WriterLease> {
  const resource = writerLockName(database, executionId);
  const locks = options.locks === undefined ? defaultLocks() : options.locks;
  if (!locks) return Promise.resolve({ resource, exclusive: false, release: async () => undefined });
  const wait = options.wait ?? false;
  return new Promise<WriterLease>((resolve, reject) => {
    let letGo!: () => void;
    const held = new Promise<void>((release) => (letGo = release));
    // Web Locks refuse a signal together with ifAvailable: the signal only applies to waiting.
    const lockOptions = wait
      ? { mode: "exclusive" as const, ...(options.signal ? { signal: options.signal } : {}) }
      : { mode: "exclusive" as const, ifAvailable: true };
    const granted = locks.request(resource, lockOptions, async (lock) => {
      if (!lock) {
        reject(new WriterLockedError(`Execution "${executionId}" (Web Lock ${resource})`));
        return;
      }
      resolve({
        resource,
        exclusive: true,
        release: async () => {
          letGo();
          await granted.catch(() => undefined);
        },
      });
      // The lock is held for as long as this callback's promise is pending.
      await held;
    });
    // Rejects before the grant when the signal aborts; after resolve() this is a no-op.
    granted.catch(reject);
  });
}
