// A promise's outcome as a value, for adapters that start a read early and await it later (the fs and
// IndexedDB getSnapshot decode the snapshot while the tail is read): the promise held meanwhile never
// rejects, so no unhandled rejection fires while it waits, and `unsettle` throws the error where it is awaited.

/** The outcome of a promise: its value, or the error it rejected with. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A promise that never rejects: it resolves with `promise`'s outcome. */
export function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
}

/** The value of a settled outcome, or its error thrown. */
export function unsettle<T>(settled: Settled<T>): T {
  if (settled.ok) return settled.value;
  throw settled.error;
}
