// The execution catalogue as a Dexie view, for pages that list executions and want them live.
//
// Consistency: the catalogue lives in the SAME database as the journal, in the `executions` object
// store, and each append folds its records into it inside the append's own idb transaction. Dexie
// only reads that store (opening the database in dynamic mode, so idb stays the schema's only owner):
// there is no second copy that could lag or disagree with the log. Dexie's liveQuery does not see
// idb's writes by itself, so each committed write is announced through Dexie's public
// `storagemutated` message on Dexie's BroadcastChannel (catalogueChanges.ts), which reaches Dexie in
// this tab and in the others. Only this file imports Dexie: an app that never imports the live view
// does not load it (ADR 0007).
import { Dexie, liveQuery, type Observable } from "dexie";
import type { ExecutionInfo, ExecutionStatus, Stores } from "../../stores/types.js";
import { openedStoresOf, type OpenedStores } from "./catalogueChanges.js";
import { openLoomDb, resolveDeps, type IndexedDbDeps } from "./connection.js";
import { IndexedDbConnectionError } from "./errors.js";
import { EXECUTIONS_STORE } from "./schema.js";

/** Which executions a live list shows; ordered by executionId like `listExecutions()`. */
export interface ExecutionsQuery {
  /** Only the executions of this data subject. */
  subject?: string;
  /** Only executions in this status. */
  status?: ExecutionStatus;
}

/** Where a catalogue lives: stores from `indexedDbStores`, a database name, or a name with its IndexedDB. */
export type CatalogueSource =
  Stores | string | { name: string; indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange };

/** A read-only Dexie connection to one loomwork database. */
export class CatalogueView {
  private readonly dexie: Dexie;

  /** @param ready resolves once the database exists with its schema (Dexie's dynamic mode cannot create it). */
  constructor(
    name: string,
    deps: IndexedDbDeps,
    private readonly ready: Promise<unknown>,
  ) {
    // Dexie's liveQuery silently never runs when Dexie found no global indexedDB when it loaded (Node,
    // where fake-indexeddb may be installed after Dexie, or an injected factory): give it ours.
    const dependencies = Dexie.dependencies as Partial<IndexedDbDeps>;
    if (!dependencies.indexedDB) Object.assign(dependencies, deps);
    // No query cache: our writes bypass Dexie, so a cached result could be served after a change.
    this.dexie = new Dexie(name, { indexedDB: deps.indexedDB, IDBKeyRange: deps.IDBKeyRange, cache: "disabled" });
    // Returning false replaces Dexie's default handlers, which log to the console. Closing lets
    // another tab's upgrade or delete proceed; the next query reopens on the new version.
    this.dexie.on("versionchange", () => {
      this.dexie.close({ disableAutoOpen: false });
      return false;
    });
    this.dexie.on("blocked", () => false);
  }

  /** The executions matching `query`, re-emitted after every append, archive or delete that commits. */
  executions(query: ExecutionsQuery = {}): Observable<ExecutionInfo[]> {
    // Dexie promises keep the liveQuery's zone across the wait, so the table read below is observed.
    return liveQuery(() =>
      Dexie.Promise.resolve(this.ready)
        .then(() => this.dexie.open())
        .then((db) => {
          const table = db.table<ExecutionInfo, string>(EXECUTIONS_STORE);
          if (query.subject !== undefined) {
            const matching = table.where("subject").equals(query.subject);
            return query.status === undefined
              ? matching.sortBy("executionId")
              : matching.filter((info) => info.status === query.status).sortBy("executionId");
          }
          if (query.status !== undefined) return table.where("status").equals(query.status).sortBy("executionId");
          return table.toArray();
        }),
    );
  }

  close(): void {
    this.dexie.close();
  }
}

// Views of stores opened by indexedDbStores, opened on first use and closed by the stores' close().
const storeViews = new WeakMap<OpenedStores, CatalogueView>();
// Views opened by name, one per IndexedDB factory and name; they live as long as the page.
const namedViews = new WeakMap<IDBFactory, Map<string, CatalogueView>>();

function storeViewOf(opened: OpenedStores): CatalogueView {
  let view = storeViews.get(opened);
  if (!view) {
    // indexedDbStores opened (so created) the database before returning the stores. Stores closed
    // before their first live query get a view whose queries report that, instead of reopening.
    const ready = opened.closed
      ? Promise.reject(new IndexedDbConnectionError(opened.name, "closed"))
      : Promise.resolve();
    ready.catch(() => undefined);
    const created = new CatalogueView(opened.name, opened.deps, ready);
    if (opened.closed) created.close();
    else opened.onClose.add(() => created.close());
    storeViews.set(opened, created);
    view = created;
  }
  return view;
}

function viewOf(source: CatalogueSource): CatalogueView {
  if (typeof source === "object" && "events" in source) {
    const opened = openedStoresOf(source);
    if (!opened)
      throw new TypeError(
        "watchExecutions / executionsLiveQuery: these stores were not opened by indexedDbStores(); pass a database name instead.",
      );
    return storeViewOf(opened);
  }
  const { name, ...injected } = typeof source === "string" ? { name: source } : source;
  const deps = resolveDeps(name, injected);
  const byName = namedViews.get(deps.indexedDB) ?? new Map<string, CatalogueView>();
  namedViews.set(deps.indexedDB, byName);
  let view = byName.get(name);
  if (!view) {
    // Create or upgrade the database through idb first, then let Dexie read it.
    const ready = openLoomDb(deps, name, { onVersionChange: () => undefined, onTerminated: () => undefined }).then(
      (db) => db.close(),
      (error: unknown) => {
        // Not cached: the next call tries again. Subscribers receive the error through the observable.
        byName.delete(name);
        if ((error as { name?: unknown } | null)?.name !== "VersionError") throw error;
        throw new IndexedDbConnectionError(name, "newer-version", { cause: error });
      },
    );
    ready.catch(() => undefined);
    view = new CatalogueView(name, deps, ready);
    byName.set(name, view);
  }
  return view;
}

/**
 * A Dexie `liveQuery` of the execution catalogue, for UIs (it works with Svelte stores, RxJS `from`,
 * or Dexie's `useLiveQuery`).
 *
 * @example
 * executionsLiveQuery("my-app").subscribe({ next: (executions) => render(executions) });
 */
export function executionsLiveQuery(source: CatalogueSource, query: ExecutionsQuery = {}): Observable<ExecutionInfo[]> {
  return viewOf(source).executions(query);
}

/** Options of `watchExecutions`. */
export interface WatchExecutionsOptions {
  /** Which executions to watch: those of one subject, or in one status. @defaultValue every execution */
  query?: ExecutionsQuery;
  /** Called when the catalogue cannot be read (e.g. the database was upgraded by a newer tab). */
  onError?: (error: unknown) => void;
}

/**
 * Calls `callback` with the executions now and after every change; returns the function that stops watching.
 *
 * @example
 * const stop = watchExecutions(stores, (executions) => console.table(executions));
 */
export function watchExecutions(
  source: CatalogueSource,
  callback: (executions: ExecutionInfo[]) => void,
  options: WatchExecutionsOptions = {},
): () => void {
  const subscription = executionsLiveQuery(source, options.query).subscribe({
    next: callback,
    error: (error: unknown) => options.onError?.(error),
  });
  return () => subscription.unsubscribe();
}
