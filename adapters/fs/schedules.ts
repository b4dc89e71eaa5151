// The ScheduleStore on node:fs: schedules.json in the journal directory holds every schedule, replaced whole and
// atomically at each write (temp file, fsync, rename, fsync of the directory). Schedules are few and written once
// per tick, so one small file is simpler than a file each; the writer lock makes this process its only writer.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { JournalCorruptionError } from "../../stores/errors.js";
import { checkStoredId } from "../../stores/ids.js";
import { copySchedule } from "../../stores/memorySchedules.js";
import { SCHEDULE_STORE_SPI_VERSION, type ScheduleStore, type StoredSchedule } from "../../stores/types.js";
import { hasCode, KeyedMutex, type FsDirectory } from "./directory.js";

/** The file of the schedules, in the journal directory. */
export const SCHEDULES_FILE = "schedules.json";

interface SchedulesFile {
  version: 1;
  schedules: StoredSchedule[];
}

/** The filesystem ScheduleStore; `fsStores` opens it. */
export class FsScheduleStore implements ScheduleStore {
  readonly spiVersion = SCHEDULE_STORE_SPI_VERSION;
  private readonly mutex = new KeyedMutex();
  private readonly path: string;

  constructor(private readonly directory: FsDirectory) {
    this.path = join(directory.dir, SCHEDULES_FILE);
  }

  async get(id: string): Promise<StoredSchedule | undefined> {
    checkStoredId(id, "schedule id");
    return (await this.read()).get(id);
  }

  async list(): Promise<StoredSchedule[]> {
    return [...(await this.read()).values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  put(schedule: StoredSchedule, expectedRevision: number): Promise<boolean> {
    checkStoredId(schedule.id, "schedule id");
    return this.change((all) => {
      if ((all.get(schedule.id)?.revision ?? 0) !== expectedRevision) return false;
      all.set(schedule.id, { ...copySchedule(schedule), revision: expectedRevision + 1 });
      return true;
    });
  }

  delete(id: string): Promise<boolean> {
    checkStoredId(id, "schedule id");
    return this.change((all) => all.delete(id));
  }

  // The compare and the write under one lock: a change reads the file, decides, and replaces it whole.
  private change(decide: (all: Map<string, StoredSchedule>) => boolean): Promise<boolean> {
    return this.mutex.run("schedules", () =>
      this.directory.write(async () => {
        const all = await this.read();
        if (!decide(all)) return false;
        const file: SchedulesFile = { version: 1, schedules: [...all.values()] };
        await this.directory.writeFileAtomic(this.path, new TextEncoder().encode(JSON.stringify(file)));
        return true;
      }),
    );
  }

  private read(): Promise<Map<string, StoredSchedule>> {
    return this.directory.read(async () => {
      let text: string;
      try {
        text = await readFile(this.path, "utf8");
      } catch (error) {
        if (hasCode(error, "ENOENT")) return new Map();
        throw error;
      }
      let file: SchedulesFile;
      try {
        file = JSON.parse(text) as SchedulesFile;
      } catch (error) {
        throw new JournalCorruptionError(this.path, 0, `not JSON (${String(error)})`, {
          remedy: "Restore it from a backup, or delete it to drop every schedule.",
        });
      }
      return new Map(file.schedules.map((schedule) => [schedule.id, schedule]));
    });
  }
}
