// The ScheduleStore of memory, fs and IndexedDB (fake-indexeddb) against the conformance cases; PostgreSQL's in
// spec/postgres/schedules.test.ts.
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { afterAll } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { indexedDbStores } from "../../adapters/indexeddb/index.js";
import { MemoryScheduleStore } from "../../stores/memorySchedules.js";
import { tempDirs } from "../support/tempDirs.js";
import { scheduleStoreConformance } from "./storeConformance.js";

const { tempDir, removeTempDirs } = tempDirs("schedule-store");
afterAll(removeTempDirs);

scheduleStoreConformance("memory", async () => ({ store: new MemoryScheduleStore(), close: async () => undefined }));
scheduleStoreConformance("fs", async () => {
  const stores = await fsStores({ dir: await tempDir("fs") });
  return { store: stores.schedules, close: () => stores.close() };
});
scheduleStoreConformance("indexeddb", async () => {
  const stores = await indexedDbStores({ name: "schedules", indexedDB: new IDBFactory(), IDBKeyRange, locks: null });
  return { store: stores.schedules, close: () => stores.close() };
});
