// Test-only: open fresh stores on an adapter for a parameterised suite, reopen them as a fresh process
// would, and clean up, whatever the adapter. The suites under spec/conformance/ take an AdapterHarness
// (the conformance suite's shape); each adapter's test file builds one.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fsStores } from "../../adapters/fs/index.js";
import { indexedDbStores, type IndexedDbStores } from "../../adapters/indexeddb/index.js";
import { postgresStores, type PostgresStores } from "../../adapters/postgres/index.js";
import { memoryStores } from "../../stores/memory.js";
import type { Stores } from "../../stores/types.js";
import { dropSchema, freshSchema } from "../postgres/server.js";
import type { AdapterHarness } from "../conformance/suite.js";

export type { AdapterHarness };

/** Stores opened by a suite, and what reopening did to them (the latest handle is what gets cleaned up). */
export interface OpenedStores {
  stores: Stores;
  /** The same storage opened anew (a fresh process or tab); memory stores hand back themselves. */
  reopen(): Promise<Stores>;
}

/** Runs `fn` over fresh stores of `harness`; cleans up the latest handle whatever happens. */
export function withStores(harness: AdapterHarness, fn: (opened: OpenedStores) => Promise<void>): () => Promise<void> {
  return async () => {
    let current = await harness.open();
    const opened: OpenedStores = {
      get stores() {
        return current;
      },
      reopen: async () => {
        if (harness.reopen) current = await harness.reopen(current);
        return current;
      },
    };
    try {
      await fn(opened);
    } finally {
      await harness.cleanup?.(current);
    }
  };
}

/** Memory stores: reopening hands back the same stores (a memory store lives as long as its process). */
export function memoryHarness(): AdapterHarness {
  return { open: async () => memoryStores() };
}

/** fsStores in a fresh temporary directory; reopening closes the writer and opens the directory again. */
export function fsHarness(): AdapterHarness {
  const dirs = new WeakMap<Stores, string>();
  const openAt = async (dir: string) => {
    const stores = await fsStores({ dir });
    dirs.set(stores, dir);
    return stores;
  };
  return {
    open: async () => openAt(await mkdtemp(join(tmpdir(), "loomwork-fs-suite-"))),
    reopen: async (previous) => {
      await previous.events.close?.();
      return openAt(dirs.get(previous)!);
    },
    cleanup: async (stores) => {
      await stores.events.close?.();
      await rm(dirs.get(stores)!, { recursive: true, force: true });
    },
  };
}

/**
 * indexedDbStores on a fresh fake-indexeddb factory per test; reopening opens the same database name on
 * the same factory (a fresh tab). The test file imports "fake-indexeddb/auto" first.
 */
export function indexedDbHarness(idb: {
  IDBFactory: new () => IDBFactory;
  IDBKeyRange: typeof IDBKeyRange;
}): AdapterHarness {
  const factories = new WeakMap<Stores, IDBFactory>();
  const openOn = async (factory: IDBFactory) => {
    const stores = await indexedDbStores({ name: "suite", indexedDB: factory, IDBKeyRange: idb.IDBKeyRange });
    factories.set(stores, factory);
    return stores;
  };
  return {
    open: () => openOn(new idb.IDBFactory()),
    reopen: async (previous) => {
      await (previous as IndexedDbStores).close();
      return openOn(factories.get(previous)!);
    },
    cleanup: async (stores) => {
      await (stores as IndexedDbStores).close();
    },
  };
}

/** postgresStores in a fresh schema of the server at `url()` (one cluster per test file); reopening opens the schema again. */
export function postgresHarness(url: () => string): AdapterHarness {
  const schemas = new WeakMap<Stores, string>();
  const openAt = async (schema: string) => {
    const stores = await postgresStores({ url: url(), schema });
    schemas.set(stores, schema);
    return stores;
  };
  return {
    open: () => openAt(freshSchema("suite")),
    reopen: async (previous) => {
      await (previous as PostgresStores).close();
      return openAt(schemas.get(previous)!);
    },
    cleanup: async (stores) => {
      await (stores as PostgresStores).close();
      await dropSchema(url(), schemas.get(stores)!);
    },
  };
}
