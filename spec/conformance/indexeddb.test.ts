// The IndexedDB adapter against the shared conformance suite, then the agent, claim-check, sweep and erasure
// suites, on fake-indexeddb (a fresh factory per test). The IDB globals must be installed before idb and
// Dexie load: idb checks instanceof against them.
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { indexedDbStores, type IndexedDbStores } from "../../adapters/indexeddb/index.js";
import type { Stores } from "../../stores/types.js";
import { indexedDbHarness } from "../support/adapterHarness.js";
import { describeAdapterSuites } from "./adapterSuites.js";
import { describeStoresConformance } from "./suite.js";

// A fresh factory per test: every test starts from an empty "disk".
const factories = new WeakMap<Stores, IDBFactory>();
const open = async (factory: IDBFactory): Promise<Stores> => {
  const stores = await indexedDbStores({ name: "conformance", indexedDB: factory, IDBKeyRange });
  factories.set(stores, factory);
  return stores;
};

describeStoresConformance("indexedDbStores (fake-indexeddb)", {
  open: () => open(new IDBFactory()),
  // A fresh tab or process: the same database name on the same factory, after closing the old handles.
  reopen: async (previous) => {
    await (previous as IndexedDbStores).close();
    return open(factories.get(previous)!);
  },
  cleanup: async (stores) => {
    await (stores as IndexedDbStores).close();
    await new Promise<void>((resolve, reject) => {
      const request = factories.get(stores)!.deleteDatabase("conformance");
      request.onsuccess = () => resolve();
      request.onerror = () => reject(request.error);
    });
  },
});

describeAdapterSuites("indexedDbStores (fake-indexeddb)", indexedDbHarness({ IDBFactory, IDBKeyRange }));
