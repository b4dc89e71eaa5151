// Per-subject keys on PostgreSQL. Destroying a key zeroes nothing in place: the row keeps the subject with
// `destroyed` and no key (the tombstone), in the same statement, so getOrCreate can never mint a new one.
import { SubjectErasedError } from "../../stores/errors.js";
import { checkStoredId } from "../../stores/ids.js";
import { KEY_STORE_SPI_VERSION, type KeyStore } from "../../stores/types.js";
import type { PgDatabase } from "./database.js";

const copy = (bytes: Buffer): Uint8Array =>
  new Uint8Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));

/** `KeyStore` on PostgreSQL; see `postgresStores`. */
export class PostgresKeyStore implements KeyStore {
  readonly spiVersion = KEY_STORE_SPI_VERSION;

  constructor(private readonly db: PgDatabase) {}

  async getOrCreate(subject: string): Promise<Uint8Array> {
    checkStoredId(subject, "subject");
    const s = this.db.s;
    const fresh = Buffer.from(crypto.getRandomValues(new Uint8Array(32)));
    // Two processes creating the same subject's key at once both get the one that was inserted first.
    await this.db.query(
      `INSERT INTO ${s}.subject_keys (subject, key) VALUES ($1, $2) ON CONFLICT (subject) DO NOTHING`,
      [subject, fresh],
    );
    const { rows } = await this.db.query<{ key: Buffer | null; destroyed: boolean }>(
      `SELECT key, destroyed FROM ${s}.subject_keys WHERE subject = $1`,
      [subject],
    );
    const row = rows[0];
    if (!row || row.destroyed || !row.key) throw new SubjectErasedError(subject);
    return copy(row.key);
  }

  async get(subject: string): Promise<Uint8Array | undefined> {
    checkStoredId(subject, "subject");
    const { rows } = await this.db.query<{ key: Buffer | null }>(
      `SELECT key FROM ${this.db.s}.subject_keys WHERE subject = $1 AND NOT destroyed`,
      [subject],
    );
    const key = rows[0]?.key;
    return key ? copy(key) : undefined;
  }

  async destroy(subject: string): Promise<void> {
    checkStoredId(subject, "subject");
    await this.db.query(
      `INSERT INTO ${this.db.s}.subject_keys (subject, key, destroyed) VALUES ($1, NULL, true)
       ON CONFLICT (subject) DO UPDATE SET key = NULL, destroyed = true`,
      [subject],
    );
  }

  async isDestroyed(subject: string): Promise<boolean> {
    checkStoredId(subject, "subject");
    const { rows } = await this.db.query<{ destroyed: boolean }>(
      `SELECT destroyed FROM ${this.db.s}.subject_keys WHERE subject = $1`,
      [subject],
    );
    return rows[0]?.destroyed === true;
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
