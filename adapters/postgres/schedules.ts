// The ScheduleStore on PostgreSQL: a row per schedule. A write names the revision it read (the compare-and-set):
// of two workers deciding one tick, one UPDATE matches and the other changes nothing (docs/scaling.md, "Schedules").
import { checkStoredId } from "../../stores/ids.js";
import { SCHEDULE_STORE_SPI_VERSION, type ScheduleStore, type StoredSchedule } from "../../stores/types.js";
import type { PgDatabase } from "./database.js";

interface Row {
  body: string;
  revision: string;
}

const fromRow = (row: Row): StoredSchedule => ({
  ...(JSON.parse(row.body) as StoredSchedule),
  revision: Number(row.revision),
});

/** `ScheduleStore` on PostgreSQL (migration 6's `schedules` table); see `postgresStores`. */
export class PostgresScheduleStore implements ScheduleStore {
  readonly spiVersion = SCHEDULE_STORE_SPI_VERSION;

  constructor(private readonly db: PgDatabase) {}

  async get(id: string): Promise<StoredSchedule | undefined> {
    checkStoredId(id, "schedule id");
    const { rows } = await this.db.query<Row>(
      `SELECT body, revision FROM ${this.db.s}.schedules WHERE schedule_id = $1`,
      [id],
    );
    return rows[0] && fromRow(rows[0]);
  }

  async list(): Promise<StoredSchedule[]> {
    const { rows } = await this.db.query<Row>(`SELECT body, revision FROM ${this.db.s}.schedules ORDER BY schedule_id`);
    return rows.map(fromRow);
  }

  async put(schedule: StoredSchedule, expectedRevision: number): Promise<boolean> {
    checkStoredId(schedule.id, "schedule id");
    const revision = expectedRevision + 1;
    const body = JSON.stringify({ ...schedule, revision });
    const values = [schedule.id, revision, schedule.paused, schedule.nextAt, body];
    const { rowCount } =
      expectedRevision === 0
        ? await this.db.query(
            `INSERT INTO ${this.db.s}.schedules (schedule_id, revision, paused, next_at, body) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (schedule_id) DO NOTHING`,
            values,
          )
        : await this.db.query(
            `UPDATE ${this.db.s}.schedules SET revision = $2, paused = $3, next_at = $4, body = $5
             WHERE schedule_id = $1 AND revision = $6`,
            [...values, expectedRevision],
          );
    return rowCount === 1;
  }

  async delete(id: string): Promise<boolean> {
    checkStoredId(id, "schedule id");
    const { rowCount } = await this.db.query(`DELETE FROM ${this.db.s}.schedules WHERE schedule_id = $1`, [id]);
    return rowCount === 1;
  }
}
