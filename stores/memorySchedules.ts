// The ScheduleStore in memory: the reference implementation the other adapters follow, and the one of memoryStores().
import { checkStoredId } from "./ids.js";
import { SCHEDULE_STORE_SPI_VERSION, type ScheduleStore, type StoredSchedule } from "./types.js";

/** Copies a schedule across the port (plain JSON), as a real store would: a caller's later change never reaches it. */
export function copySchedule(schedule: StoredSchedule): StoredSchedule {
  return JSON.parse(JSON.stringify(schedule)) as StoredSchedule;
}

/** The schedules of memoryStores(). */
export class MemoryScheduleStore implements ScheduleStore {
  readonly spiVersion = SCHEDULE_STORE_SPI_VERSION;
  private readonly schedules = new Map<string, StoredSchedule>();

  async get(id: string): Promise<StoredSchedule | undefined> {
    checkStoredId(id, "schedule id");
    const found = this.schedules.get(id);
    return found && copySchedule(found);
  }

  async list(): Promise<StoredSchedule[]> {
    return [...this.schedules.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(copySchedule);
  }

  async put(schedule: StoredSchedule, expectedRevision: number): Promise<boolean> {
    checkStoredId(schedule.id, "schedule id");
    // The compare and the set with no await between them: nothing interleaves.
    if ((this.schedules.get(schedule.id)?.revision ?? 0) !== expectedRevision) return false;
    this.schedules.set(schedule.id, { ...copySchedule(schedule), revision: expectedRevision + 1 });
    return true;
  }

  async delete(id: string): Promise<boolean> {
    checkStoredId(id, "schedule id");
    return this.schedules.delete(id);
  }
}
