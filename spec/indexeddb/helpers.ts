// Shared set-up for the IndexedDB adapter specs: a fresh fake-indexeddb "disk" per test.
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { vi } from "vitest";
import { indexedDbStores, type IndexedDbStores, type IndexedDbStoresOptions } from "../../adapters/indexeddb/index.js";

export { started, step } from "../conformance/suite.js";

let counter = 0;

/** Opens stores on a new factory (or the one given) under a unique database name. */
export async function openFresh(
  overrides: Partial<IndexedDbStoresOptions> = {},
): Promise<{ stores: IndexedDbStores; factory: IDBFactory; name: string }> {
  const factory = (overrides.indexedDB as IDBFactory | undefined) ?? new IDBFactory();
  const name = overrides.name ?? `spec-${++counter}`;
  const stores = await indexedDbStores({ IDBKeyRange, ...overrides, name, indexedDB: factory });
  return { stores, factory, name };
}

/** Resolves with the request's result, or rejects with its error; records whether it was blocked. */
export function settle<T>(request: IDBRequest<T>, onBlocked?: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
    if (onBlocked) (request as unknown as IDBOpenDBRequest).onblocked = onBlocked;
  });
}

/** Waits until `predicate` holds for the latest value pushed into `values`. */
export async function eventually<T>(values: T[], predicate: (latest: T) => boolean, timeoutMs = 2_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const latest = values[values.length - 1];
    if (values.length > 0 && predicate(latest as T)) return latest as T;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`Timed out after ${timeoutMs} ms; last value: ${JSON.stringify(values[values.length - 1])}`);
}

export interface Opened {
  stores: string[];
  mode: IDBTransactionMode;
  durability: string | undefined;
}

/** Records every transaction opened on any IndexedDB connection while `fn` runs. */
export async function transactionsDuring(fn: () => Promise<void>): Promise<Opened[]> {
  const opened: Opened[] = [];
  const original = IDBDatabase.prototype.transaction;
  const spy = vi.spyOn(IDBDatabase.prototype, "transaction").mockImplementation(function (
    this: IDBDatabase,
    names: string | Iterable<string>,
    mode?: IDBTransactionMode,
    options?: IDBTransactionOptions,
  ) {
    opened.push({
      stores: (typeof names === "string" ? [names] : [...names]).sort(),
      mode: mode ?? "readonly",
      durability: options?.durability,
    });
    return original.call(this, names, mode, options);
  });
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return opened;
}
