// loomwork/indexeddb: the storage SPIs on IndexedDB, for agents that run in a browser tab, offline.
// Browser-safe: nothing here imports node:*. Dexie is loaded only by the live catalogue view
// (executionsLiveQuery, watchExecutions, CatalogueView; also at loomwork/indexeddb/catalogue): a bundle
// that does not use them leaves it out (the package is "sideEffects": false).
import { subtleCrypto } from "../../stores/bytes.js";
import { compressionOption, type Compression } from "../../stores/compression.js";
import type { Stores } from "../../stores/types.js";
import { registerOpenedStores, type OpenedStores } from "./catalogueChanges.js";
import { IndexedDbConnection, resolveDeps } from "./connection.js";
import type { IndexedDbConnectionError } from "./errors.js";
import { DEFAULT_LIST_PAGE_SIZE, IndexedDbContentStore } from "./contentStore.js";
import { IndexedDbEventStore } from "./eventStore.js";
import { IndexedDbKeyStore } from "./keyStore.js";
import { IndexedDbScheduleStore } from "./schedules.js";
import { acquireWriter, type AcquireWriterOptions, type LockManagerLike, type WriterLease } from "./locks.js";

/** Options of `indexedDbStores`: the database name, and an IndexedDB factory for tests. */
export interface IndexedDbStoresOptions {
  /** The IndexedDB database name; one database holds journal, catalogue, blobs and keys. */
  name: string;
  /** The IndexedDB factory the database is opened with (e.g. fake-indexeddb's in tests). @defaultValue globalThis.indexedDB */
  indexedDB?: IDBFactory;
  /** The IDBKeyRange that goes with `indexedDB` (from the same implementation). @defaultValue globalThis.IDBKeyRange */
  IDBKeyRange?: typeof IDBKeyRange;
  /** The Web Locks manager `acquireWriter` uses; `null` disables locking. @defaultValue navigator.locks */
  locks?: LockManagerLike | null;
  /** Blobs read per transaction by `content.list()`. @defaultValue 256 */
  listPageSize?: number;
  /**
   * Compresses snapshots and blobs written from now on with `"deflate"` (stores/compression.ts: the format
   * `CompressionStream("deflate")` writes, the one `fsStores({ compression })` uses), each only when smaller.
   * Reads take compressed and plain data alike, so a database mixing both reads fine. See docs/storage.md, "Compression".
   * @defaultValue "none"
   */
  compression?: Compression;
  /**
   * Called when opening the database waits on another connection that does not close (a tab running an older
   * version of the app, holding the database open while this one upgrades it); the open goes on once it closes.
   * Show the user what to do: close the other tabs of this site.
   */
  onBlocked?: () => void;
  /**
   * Called once when the connection is gone for good while the stores are open: another tab deleted the database
   * (`reason: "deleted"`) or upgraded it to a newer version (`"newer-version"`), or site data was cleared
   * (`"vanished"`). Every later call fails with the same IndexedDbConnectionError; tell the user to reload.
   */
  onConnectionLost?: (error: IndexedDbConnectionError) => void;
}

/** Stores on one IndexedDB database, with the cross-tab writer lock. */
export interface IndexedDbStores extends Stores {
  readonly name: string;
  events: IndexedDbEventStore;
  content: IndexedDbContentStore;
  keys: IndexedDbKeyStore;
  /** The schedules (loomwork/schedules), in the `schedules` object store. */
  schedules: IndexedDbScheduleStore;
  /** `acquireWriter(name, executionId)` with this database's name and lock manager. */
  acquireWriter(executionId: string, options?: Omit<AcquireWriterOptions, "locks">): Promise<WriterLease>;
  /** Closes the three stores and the catalogue view; the database stays on disk. */
  close(): Promise<void>;
}

/**
 * Opens (creating or upgrading) the IndexedDB database `name` and returns the three stores on it.
 *
 * @example
 * const stores = await indexedDbStores({ name: "my-app" });
 * const app = createApp(defineConfig({ stores, effects }));
 */
export async function indexedDbStores(options: IndexedDbStoresOptions): Promise<IndexedDbStores> {
  const { name } = options;
  if (typeof name !== "string" || name.length === 0) {
    throw new TypeError(
      `indexedDbStores: option "name" must be a non-empty string (the IndexedDB database name), got ${JSON.stringify(name)}.`,
    );
  }
  const pageSize = options.listPageSize ?? DEFAULT_LIST_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    throw new RangeError(`indexedDbStores: option "listPageSize" must be a positive integer, got ${pageSize}.`);
  }
  // Checked first: without WebCrypto the first run would die on crypto.subtle, long after this boot.
  subtleCrypto("indexedDbStores");
  const deps = resolveDeps(name, options);
  const connection = new IndexedDbConnection(name, deps, {
    ...(options.onBlocked ? { onBlocked: options.onBlocked } : {}),
    ...(options.onConnectionLost ? { onConnectionLost: options.onConnectionLost } : {}),
  });
  const releaseBoot = connection.retain();
  const compression = compressionOption(options.compression, "indexedDbStores");
  const events = new IndexedDbEventStore(connection, connection.retain(), compression);
  const content = new IndexedDbContentStore(connection, connection.retain(), pageSize, compression);
  const keys = new IndexedDbKeyStore(connection, connection.retain());
  const schedules = new IndexedDbScheduleStore(connection, connection.retain());
  // Open now, so a missing or newer database fails here (at boot) rather than on the first append.
  try {
    await connection.database();
  } catch (error) {
    await Promise.all([events.close(), content.close(), keys.close(), schedules.close(), releaseBoot()]);
    throw error;
  }
  await releaseBoot();
  // The live catalogue view (catalogue.ts, on Dexie) opens on its first use, from this entry.
  const opened: OpenedStores = { name, deps, closed: false, onClose: new Set() };
  const locks = options.locks;
  const stores: IndexedDbStores = {
    name,
    events,
    content,
    keys,
    schedules,
    acquireWriter: (executionId, writerOptions = {}) =>
      acquireWriter(name, executionId, locks === undefined ? writerOptions : { ...writerOptions, locks }),
    close: async () => {
      opened.closed = true;
      for (const closeView of opened.onClose) closeView();
      opened.onClose.clear();
      await Promise.all([events.close(), content.close(), keys.close(), schedules.close()]);
    },
  };
  registerOpenedStores(stores, opened);
  return stores;
}

export { IndexedDbEventStore } from "./eventStore.js";
export { IndexedDbContentStore, DEFAULT_LIST_PAGE_SIZE } from "./contentStore.js";
export { IndexedDbKeyStore } from "./keyStore.js";
export { IndexedDbScheduleStore } from "./schedules.js";
export { IndexedDbConnectionError, isQuotaExceeded } from "./errors.js";
export { executionsLiveQuery, watchExecutions, CatalogueView } from "./catalogue.js";
export { acquireWriter, writerLockName } from "./locks.js";
export { takeOverWhenReleased } from "./takeover.js";
export { SCHEMA_VERSION } from "./schema.js";

export type { IndexedDbConnectionReason } from "./errors.js";
export type { CatalogueSource, ExecutionsQuery, WatchExecutionsOptions } from "./catalogue.js";
export type { AcquireWriterOptions, LockManagerLike, WriterLease } from "./locks.js";
export type { TakeOverOptions } from "./takeover.js";
export type { LoomDbSchema } from "./schema.js";
