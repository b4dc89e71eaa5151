// The three stores a benchmark runs on, opened fresh and cleaned up afterwards: memory, fs (a temp
// directory) and IndexedDB (fake-indexeddb, one factory per database so nothing is shared).
// idb recognises IndexedDB objects by the global interfaces, so they must exist even with an injected factory.
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { fsStores, type FsStores } from "../adapters/fs/index.js";
import { indexedDbStores, type IndexedDbStores } from "../adapters/indexeddb/index.js";
import { memoryStores } from "../stores/memory.js";
import type { Stores } from "../stores/types.js";
import { tempDirs } from "../spec/support/tempDirs.js";

export type StoreKind = "memory" | "fs" | "indexeddb";
export const STORE_KINDS: StoreKind[] = ["memory", "fs", "indexeddb"];

export type BenchStores =
  | { kind: "memory"; stores: Stores; close(): Promise<void> }
  | { kind: "fs"; stores: FsStores; dir: string; close(): Promise<void> }
  | { kind: "indexeddb"; stores: IndexedDbStores; factory: IDBFactory; name: string; close(): Promise<void> };

export const { tempDir, removeTempDirs: removeTemps } = tempDirs("bench");

let databases = 0;

/** Opens empty stores of `kind`. */
export async function openStores(kind: StoreKind): Promise<BenchStores> {
  if (kind === "memory") return { kind, stores: memoryStores(), close: async () => undefined };
  if (kind === "fs") {
    const dir = await tempDir("fs");
    const stores = await fsStores({ dir });
    return { kind, stores, dir, close: () => stores.close() };
  }
  const factory = new IDBFactory();
  const name = `loomwork-bench-${++databases}`;
  const stores = await indexedDbStores({ name, indexedDB: factory, IDBKeyRange, locks: null });
  return { kind, stores, factory, name, close: () => stores.close() };
}

/** Opens the same storage again (a fresh app's view of it): fs re-opens the directory, IndexedDB the database. */
export async function reopenStores(previous: BenchStores): Promise<BenchStores> {
  if (previous.kind === "memory") return previous;
  if (previous.kind === "fs") {
    const stores = await fsStores({ dir: previous.dir });
    return { ...previous, stores, close: () => stores.close() };
  }
  const stores = await indexedDbStores({ name: previous.name, indexedDB: previous.factory, IDBKeyRange, locks: null });
  return { ...previous, stores, close: () => stores.close() };
}
