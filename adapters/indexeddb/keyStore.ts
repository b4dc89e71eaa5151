// Per-subject data keys on IndexedDB. Destroying a key deletes it and writes a tombstone in the same
// transaction, so a subject once erased can never be handed a fresh key (which would make new data
// readable again under the subject's name).
import { SubjectErasedError } from "../../stores/errors.js";
import { KEY_STORE_SPI_VERSION, type KeyStore } from "../../stores/types.js";
import { issueAll, type IndexedDbConnection } from "./connection.js";

/** The KeyStore on IndexedDB (object stores `keys` and `erasedSubjects`). */
export class IndexedDbKeyStore implements KeyStore {
  readonly spiVersion = KEY_STORE_SPI_VERSION;

  constructor(
    private readonly connection: IndexedDbConnection,
    private readonly releaseConnection: () => Promise<void>,
  ) {}

  async getOrCreate(subject: string): Promise<Uint8Array> {
    // Drawn before the transaction; only used when the subject has no key yet.
    const fresh = crypto.getRandomValues(new Uint8Array(32));
    const what = `creating the key of subject "${subject}"`;
    // Strict: a key lost after data was sealed under it would lose that data.
    return this.connection.transact(["keys", "erasedSubjects"], "readwrite", what, async (tx) => {
      if ((await tx.objectStore("erasedSubjects").getKey(subject)) !== undefined) throw new SubjectErasedError(subject);
      const keys = tx.objectStore("keys");
      const existing = await keys.get(subject);
      if (existing) return new Uint8Array(existing);
      // add, not put: two tabs racing to create the key cannot overwrite each other's.
      await keys.add(fresh, subject);
      return fresh.slice();
    });
  }

  async get(subject: string): Promise<Uint8Array | undefined> {
    const key = await this.connection.transact(["keys"], "readonly", `reading the key of subject "${subject}"`, (tx) =>
      tx.objectStore("keys").get(subject),
    );
    return key && new Uint8Array(key);
  }

  async destroy(subject: string): Promise<void> {
    // The key row is deleted, not zeroed: IndexedDB gives no control over physical erasure either
    // way (see docs/storage.md); what it guarantees is that no reader gets the key back.
    await this.connection.transact(["keys", "erasedSubjects"], "readwrite", `destroying the key of subject "${subject}"`, (tx) =>
      issueAll([() => tx.objectStore("keys").delete(subject), () => tx.objectStore("erasedSubjects").put({ subject })]),
    );
  }

  async isDestroyed(subject: string): Promise<boolean> {
    const key = await this.connection.transact(["erasedSubjects"], "readonly", `checking subject "${subject}"`, (tx) =>
      tx.objectStore("erasedSubjects").getKey(subject),
    );
    return key !== undefined;
  }

  async close(): Promise<void> {
    await this.releaseConnection();
  }
}
