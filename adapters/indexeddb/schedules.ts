// The ScheduleStore on IndexedDB: the `schedules` object store (schema version 3). A put compares the revision and
// writes in one readwrite transaction, so two tabs firing one tick write its outcome once.
import { checkStoredId } from "../../stores/ids.js";
import { SCHEDULE_STORE_SPI_VERSION, type ScheduleStore, type StoredSchedule } from "../../stores/types.js";
import type { IndexedDbConnection } from "./connection.js";

/** The ScheduleStore on IndexedDB; `indexedDbStores` opens it. */
export class IndexedDbScheduleStore implements ScheduleStore {
  readonly spiVersion = SCHEDULE_STORE_SPI_VERSION;

  constructor(
    private readonly connection: IndexedDbConnection,
    private readonly releaseConnection: () => Promise<void>,
  ) {}

  async get(id: string): Promise<StoredSchedule | undefined> {
    checkStoredId(id, "schedule id");
    return this.connection.transact(["schedules"], "readonly", `reading schedule "${id}"`, (tx) =>
      tx.objectStore("schedules").get(id),
    );
  }

  async list(): Promise<StoredSchedule[]> {
    // Keys are ids: getAll returns them in id order.
    return this.connection.transact(["schedules"], "readonly", "listing the schedules", (tx) =>
      tx.objectStore("schedules").getAll(),
    );
  }

  async put(schedule: StoredSchedule, expectedRevision: number): Promise<boolean> {
    checkStoredId(schedule.id, "schedule id");
    const row: StoredSchedule = {
      ...(JSON.parse(JSON.stringify(schedule)) as StoredSchedule),
      revision: expectedRevision + 1,
    };
    return this.connection.transact(["schedules"], "readwrite", `writing schedule "${schedule.id}"`, async (tx) => {
      const store = tx.objectStore("schedules");
      if (((await store.get(schedule.id))?.revision ?? 0) !== expectedRevision) return false;
      await store.put(row);
      return true;
    });
  }

  async delete(id: string): Promise<boolean> {
    checkStoredId(id, "schedule id");
    return this.connection.transact(["schedules"], "readwrite", `deleting schedule "${id}"`, async (tx) => {
      const store = tx.objectStore("schedules");
      if ((await store.getKey(id)) === undefined) return false;
      await store.delete(id);
      return true;
    });
  }

  close(): Promise<void> {
    return this.releaseConnection();
  }
}
