// One lazily (re)opened idb connection shared by the three stores of an `indexedDbStores` call, and
// the transaction helper every store operation goes through.
import { openDB, wrap, type IDBPDatabase, type IDBPTransaction } from "idb";
import { IndexedDbConnectionError, toStoreError } from "./errors.js";
import { SCHEMA_VERSION, upgradeSchema, type LoomDbSchema, type LoomStoreName } from "./schema.js";

/** The IndexedDB implementation to run on: the page's own, or fake-indexeddb in Node. */
export interface IndexedDbDeps {
  indexedDB: IDBFactory;
  IDBKeyRange: typeof IDBKeyRange;
}

export type LoomDb = IDBPDatabase<LoomDbSchema>;
export type WriteMode = "readonly" | "readwrite";
export type LoomTx<N extends LoomStoreName, M extends WriteMode> = IDBPTransaction<LoomDbSchema, N[], M>;

/** Resolves the injected or global IndexedDB; refuses early, and clearly, when there is none. */
export function resolveDeps(name: string, options: Partial<IndexedDbDeps>): IndexedDbDeps {
  const scope = globalThis as { indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange; IDBTransaction?: unknown };
  const factory = options.indexedDB ?? scope.indexedDB;
  const keyRange = options.IDBKeyRange ?? scope.IDBKeyRange;
  // idb recognises IndexedDB objects by instanceof against the global interfaces (IDBTransaction, ...),
  // so they must exist even when the factory is injected.
  if (!factory || !keyRange || scope.IDBTransaction === undefined)
    throw new IndexedDbConnectionError(name, "unavailable");
  return { indexedDB: factory, IDBKeyRange: keyRange };
}

interface ConnectionEvents {
  onVersionChange(newVersion: number | null): void;
  onTerminated(): void;
  /**
   * Called when the open would create the database (it does not exist). Returning false aborts the
   * creation: the open then rejects with an AbortError and no database is left behind.
   */
  mayCreate?(): boolean;
  /** The open waits for other connections (another tab on an older version) that do not close. */
  onBlocked?(): void;
}

/** What the app hears of its connection: `IndexedDbStoresOptions.onBlocked` and `onConnectionLost`. */
export interface ConnectionHooks {
  onBlocked?: () => void;
  onConnectionLost?: (error: IndexedDbConnectionError) => void;
}

/** Opens (creating or upgrading) the database through idb. */
export function openLoomDb(deps: IndexedDbDeps, name: string, events: ConnectionEvents): Promise<LoomDb> {
  // oldVersion 0 means the database did not exist: this open is creating it.
  const upgrade = (db: LoomDb, oldVersion: number, transaction: { abort(): void; done?: Promise<void> }) => {
    if (oldVersion === 0 && events.mayCreate?.() === false) {
      // The open's own rejection reports the abort; idb's `done` of the upgrade transaction must not as well.
      transaction.done?.catch(() => undefined);
      transaction.abort();
    } else {
      upgradeSchema(db);
    }
  };
  if (deps.indexedDB === (globalThis as { indexedDB?: IDBFactory }).indexedDB) {
    return openDB<LoomDbSchema>(name, SCHEMA_VERSION, {
      upgrade: (db, oldVersion, _newVersion, transaction) => upgrade(db, oldVersion, transaction),
      blocking: (_current, next) => events.onVersionChange(next),
      blocked: () => events.onBlocked?.(),
      terminated: () => events.onTerminated(),
    });
  }
  // idb's openDB always opens on the global factory; an injected one is opened the same way via wrap().
  const request = deps.indexedDB.open(name, SCHEMA_VERSION);
  request.addEventListener("blocked", () => events.onBlocked?.());
  request.addEventListener("upgradeneeded", (event) =>
    upgrade(wrap(request.result) as unknown as LoomDb, event.oldVersion, request.transaction!),
  );
  return (wrap(request) as Promise<unknown> as Promise<LoomDb>).then((db) => {
    db.addEventListener("versionchange", (event) => events.onVersionChange(event.newVersion));
    db.addEventListener("close", () => events.onTerminated());
    return db;
  });
}

/**
 * The shared connection. Invariants: at most one native connection is open; a `versionchange` closes
 * it at once (another tab's upgrade or delete must never hang on us); after a delete, or after every
 * holder released it, it refuses with IndexedDbConnectionError instead of recreating an empty database.
 * Only the first open may create the database: a reopen (after a forced close, e.g. "Clear site data",
 * which closes connections without a versionchange and then deletes the database) that finds it gone
 * refuses with reason "vanished", from then on.
 */
export class IndexedDbConnection {
  private db: LoomDb | undefined;
  private opening: Promise<LoomDb> | undefined;
  private refusal: IndexedDbConnectionError | undefined;
  private holders = 0;
  private openedOnce = false;
  private lostReported = false;

  constructor(
    readonly name: string,
    readonly deps: IndexedDbDeps,
    private readonly hooks: ConnectionHooks = {},
  ) {}

  // Tells the app, once, that the connection is gone for good (not for a close it asked for).
  private lost(error: IndexedDbConnectionError): void {
    if (this.lostReported || error.reason === "closed") return;
    this.lostReported = true;
    this.hooks.onConnectionLost?.(error);
  }

  /** Registers a holder; the native connection closes when the last holder releases it. */
  retain(): () => Promise<void> {
    this.holders++;
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      if (--this.holders === 0) this.shutDown(new IndexedDbConnectionError(this.name, "closed"));
    };
  }

  /** The open database, reopening it after a versionchange or an abnormal close. */
  async database(): Promise<LoomDb> {
    if (this.refusal) throw this.refusal;
    if (this.db) return this.db;
    this.opening ??= this.open().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private async open(): Promise<LoomDb> {
    let db: LoomDb;
    let vanished = false;
    try {
      db = await openLoomDb(this.deps, this.name, {
        onVersionChange: (next) => this.onVersionChange(db, next),
        onTerminated: () => this.forget(db),
        onBlocked: () => this.hooks.onBlocked?.(),
        mayCreate: () => {
          vanished = this.openedOnce;
          return !vanished;
        },
      });
    } catch (error) {
      if (vanished) {
        this.refusal ??= new IndexedDbConnectionError(this.name, "vanished", { cause: error });
        this.lost(this.refusal);
        throw this.refusal;
      }
      if ((error as { name?: unknown } | null)?.name === "VersionError") {
        const newer = new IndexedDbConnectionError(this.name, "newer-version", { cause: error });
        if (this.openedOnce) this.lost(newer);
        throw newer;
      }
      throw toStoreError(error, undefined, `opening IndexedDB database "${this.name}"`);
    }
    if (this.refusal) {
      db.close();
      throw this.refusal;
    }
    this.openedOnce = true;
    this.db = db;
    return db;
  }

  private onVersionChange(db: LoomDb, newVersion: number | null): void {
    db.close();
    this.forget(db);
    // A newer version is detected on reopen (VersionError); a delete is final for this object.
    if (newVersion === null) {
      this.refusal ??= new IndexedDbConnectionError(this.name, "deleted");
      this.lost(this.refusal);
    } else if (this.hooks.onConnectionLost && this.holders > 0) {
      // Reopen now, queued behind the other connection's upgrade, so that the app hears of a newer version when
      // it happens rather than at its next write; an upgrade that was aborted reopens as before.
      this.database().catch(() => undefined);
    }
  }

  private forget(db: LoomDb): void {
    if (this.db === db) this.db = undefined;
  }

  private shutDown(reason: IndexedDbConnectionError): void {
    this.refusal ??= reason;
    this.db?.close();
    this.db = undefined;
  }

  /**
   * Runs `body` in one transaction and resolves once it committed. Only IndexedDB requests may be
   * awaited inside `body`: any other await lets the transaction auto-commit early. A throw aborts
   * the transaction, so nothing of it is written; quota failures surface as StorageQuotaError.
   */
  async transact<N extends LoomStoreName, M extends WriteMode, T>(
    storeNames: N[],
    mode: M,
    what: string,
    body: (tx: LoomTx<N, M>) => Promise<T>,
    durability: "strict" | "relaxed" = "strict",
  ): Promise<T> {
    let db = await this.database();
    const options = mode === "readwrite" ? { durability } : {};
    let tx: LoomTx<N, M>;
    try {
      tx = db.transaction(storeNames, mode, options);
    } catch (error) {
      // The connection closed between database() and transaction() (a versionchange): open anew once.
      if (this.db === db || (error as { name?: unknown } | null)?.name !== "InvalidStateError") throw error;
      db = await this.database();
      tx = db.transaction(storeNames, mode, options);
    }
    // `done` rejects when we abort below; the rejection is reported through `body`'s error instead.
    tx.done.catch(() => undefined);
    try {
      const result = await body(tx);
      await tx.done;
      return result;
    } catch (error) {
      try {
        tx.abort();
      } catch {
        // Already aborted or committed: nothing left to undo.
      }
      throw toStoreError(error, tx.error, what);
    }
  }
}

/**
 * Issues IndexedDB requests in order and waits for all of them. A request that throws synchronously
 * (DataCloneError, a quota check) stops the issuing; those already issued are still observed, so an
 * aborted transaction never leaves an unhandled rejection behind.
 */
export async function issueAll(requests: Iterable<() => Promise<unknown>>): Promise<void> {
  const issued: Promise<unknown>[] = [];
  for (const request of requests) {
    const pending = request();
    pending.catch(() => undefined);
    issued.push(pending);
  }
  await Promise.all(issued);
}
