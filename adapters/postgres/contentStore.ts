// Content-addressed blobs on PostgreSQL. The touch clock is a sequence: touchClock() draws T, and every
// later put draws a larger value, so the conditional delete (`touched_at < cutoff`, one row lock) never
// takes a blob a put touched after the cutoff was read.
import { contentAddress } from "../../stores/bytes.js";
import { CONTENT_STORE_SPI_VERSION, type ContentInfo, type ContentStore } from "../../stores/types.js";
import type { PgDatabase } from "./database.js";

const LIST_PAGE = 500;

/** `ContentStore` on PostgreSQL; see `postgresStores`. */
export class PostgresContentStore implements ContentStore {
  readonly spiVersion = CONTENT_STORE_SPI_VERSION;
  readonly sealsContent = false;

  constructor(private readonly db: PgDatabase) {}

  async put(bytes: Uint8Array): Promise<string> {
    const address = await contentAddress(bytes);
    const s = this.db.s;
    // Touch first: a blob already stored is not sent again.
    const touched = await this.db.query(
      `UPDATE ${s}.blobs SET touched_at = nextval('${s}.touch_clock') WHERE address = $1`,
      [address],
    );
    if (touched.rowCount === 0) {
      await this.db.query(
        `INSERT INTO ${s}.blobs (address, bytes, size, touched_at) VALUES ($1, $2, $3, nextval('${s}.touch_clock'))
         ON CONFLICT (address) DO UPDATE SET touched_at = EXCLUDED.touched_at`,
        [address, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), bytes.byteLength],
      );
    }
    return address;
  }

  async get(address: string): Promise<Uint8Array | undefined> {
    const { rows } = await this.db.query<{ bytes: Buffer }>(`SELECT bytes FROM ${this.db.s}.blobs WHERE address = $1`, [
      address,
    ]);
    const bytes = rows[0]?.bytes;
    return bytes && new Uint8Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  }

  async has(address: string): Promise<boolean> {
    const { rowCount } = await this.db.query(`SELECT 1 FROM ${this.db.s}.blobs WHERE address = $1`, [address]);
    return rowCount === 1;
  }

  async delete(address: string): Promise<boolean> {
    const { rowCount } = await this.db.query(`DELETE FROM ${this.db.s}.blobs WHERE address = $1`, [address]);
    return rowCount === 1;
  }

  async deleteIfUntouchedSince(address: string, cutoff: number): Promise<boolean> {
    const { rowCount } = await this.db.query(`DELETE FROM ${this.db.s}.blobs WHERE address = $1 AND touched_at < $2`, [
      address,
      cutoff,
    ]);
    return rowCount === 1;
  }

  async touchClock(): Promise<number> {
    const { rows } = await this.db.query<{ t: string }>(`SELECT nextval('${this.db.s}.touch_clock')::text AS t`);
    return Number(rows[0]!.t);
  }

  async *list(): AsyncIterable<ContentInfo> {
    let after = "";
    while (true) {
      const { rows } = await this.db.query<{ address: string; size: number; touched_at: string }>(
        `SELECT address, size, touched_at::text AS touched_at FROM ${this.db.s}.blobs WHERE address > $1 ORDER BY address LIMIT ${LIST_PAGE}`,
        [after],
      );
      for (const row of rows) yield { address: row.address, size: row.size, touchedAt: Number(row.touched_at) };
      if (rows.length < LIST_PAGE) return;
      after = rows.at(-1)!.address;
    }
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
