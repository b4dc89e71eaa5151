// The agent, claim-check, sweep and erasure suites on indexedDbStores under fake-indexeddb, a fresh
// factory per test. The IDB globals must be installed before idb and Dexie load.
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { indexedDbHarness } from "../support/adapterHarness.js";
import { describeAdapterSuites } from "./suites.js";

describeAdapterSuites("indexedDbStores (fake-indexeddb)", indexedDbHarness({ IDBFactory, IDBKeyRange }));
