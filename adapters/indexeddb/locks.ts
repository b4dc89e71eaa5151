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
  /**
   * Wait until the current holder releases (or its tab closes) instead of refusing at once. A lease taken this
   * way is lent to the next acquisition without `wait` in this tab (the runtime's, when you then call
   * `app.resume` or `app.start`), one at a time: that is how a tab takes over an execution another tab ran.
   * The lock is let go once both have released. @defaultValue false
   */
  wait?: boolean;
  /** Lend the lease to the next acquisition without `wait` in this tab (see `wait`). @defaultValue the value of `wait` */
  lend?: boolean;
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

// Locks this realm holds, per lock manager and resource. Web Locks are not reentrant: without this, the runtime's
// own acquisition (app.resume) would be refused by the lease the same tab took to wait its turn.
interface Holding {
  /** Taken with `wait`: may be lent to one acquisition without `wait` at a time. */
  readonly lendable: boolean;
  lent: boolean;
  /** The holder and the borrower, while each has not released. */
  refs: number;
  /** Lets the lock go; resolves once it is released. */
  letGo(): Promise<unknown>;
}
const heldHere = new WeakMap<LockManagerLike, Map<string, Holding>>();

function share(locks: LockManagerLike, resource: string, holding: Holding, borrowed: boolean): WriterLease {
  let released = false;
  return {
    resource,
    exclusive: true,
    release: async () => {
      if (released) return;
      released = true;
      if (borrowed) holding.lent = false;
      if (--holding.refs > 0) return;
      if (heldHere.get(locks)?.get(resource) === holding) heldHere.get(locks)?.delete(resource);
      await holding.letGo();
    },
  };
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
 * // Take over an execution another tab ran: queue for its lock, then resume it under that lease.
 * const lease = await acquireWriter("my-app", executionId, { wait: true });
 * try { await app.resume(executionId); } finally { await lease.release(); }
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
  const here = heldHere.get(locks) ?? new Map<string, Holding>();
  heldHere.set(locks, here);
  const holding = here.get(resource);
  if (!wait && holding?.lendable && !holding.lent) {
    holding.lent = true;
    holding.refs++;
    return Promise.resolve(share(locks, resource, holding, true));
  }
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
      const mine: Holding = {
        lendable: options.lend ?? wait,
        lent: false,
        refs: 1,
        letGo: () => (letGo(), granted.catch(() => undefined)),
      };
      here.set(resource, mine);
      resolve(share(locks, resource, mine, false));
      // The lock is held for as long as this callback's promise is pending.
      await held;
    });
    // Rejects before the grant when the signal aborts; after resolve() this is a no-op.
    granted.catch(reject);
  });
}
