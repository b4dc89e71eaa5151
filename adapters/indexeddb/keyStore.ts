// Per-subject data keys on IndexedDB. Destroying a key deletes it and writes a tombstone in the same
// transaction, so a subject once erased can never be handed a fresh key (which would make new data
// readable again under the subject's name).
//
// Every key created also leaves a row `keyCreated:<subject>` in `meta`, in the transaction that adds
// the key: a key row that later disappears without a tombstone (devtools, a partial clear) is a lost
// key, refused with KeyMissingError, never replaced by a fresh one.
import { KeyMissingError, SubjectErasedError } from "../../stores/errors.js";
import { checkStoredId } from "../../stores/ids.js";
import { KEY_STORE_SPI_VERSION, type KeyStore } from "../../stores/types.js";
import { issueAll, type IndexedDbConnection } from "./connection.js";

/** Prefix of the `meta` rows recording that a subject's key was created. */
const KEY_CREATED = "keyCreated:";

/** The KeyStore on IndexedDB (object stores `keys` and `erasedSubjects`, and `keyCreated:` rows in `meta`). */
export class IndexedDbKeyStore implements KeyStore {
  readonly spiVersion = KEY_STORE_SPI_VERSION;
  /** Subjects whose `keyCreated:` row this instance has seen or written: their seals skip `meta`. */
  private readonly recorded = new Set<string>();

  constructor(
    private readonly connection: IndexedDbConnection,
    private readonly releaseConnection: () => Promise<void>,
  ) {}

  async getOrCreate(subject: string): Promise<Uint8Array> {
    checkStoredId(subject, "subject");
    // Drawn before the transaction; only used when the subject has no key yet.
    const fresh = crypto.getRandomValues(new Uint8Array(32));
    const what = `creating the key of subject "${subject}"`;
    // Strict: a key lost after data was sealed under it would lose that data. Every seal calls this: once
    // the row is known, the transaction leaves `meta` out of its scope (blob puts write the touch clock there).
    const key = this.recorded.has(subject)
      ? await this.connection.transact(["keys", "erasedSubjects"], "readwrite", what, async (tx) => {
          if ((await tx.objectStore("erasedSubjects").getKey(subject)) !== undefined) return "erased";
          const existing = await tx.objectStore("keys").get(subject);
          return existing ? new Uint8Array(existing) : "missing";
        })
      : await this.connection.transact(["keys", "erasedSubjects", "meta"], "readwrite", what, async (tx) => {
          if ((await tx.objectStore("erasedSubjects").getKey(subject)) !== undefined) return "erased";
          const keys = tx.objectStore("keys");
          const meta = tx.objectStore("meta");
          const existing = await keys.get(subject);
          const created = await meta.getKey(KEY_CREATED + subject);
          if (existing) {
            // A key from before `keyCreated:` rows existed gets its row now.
            if (created === undefined) await meta.put(1, KEY_CREATED + subject);
            return new Uint8Array(existing);
          }
          if (created !== undefined) return "missing";
          // add, not put: two tabs racing to create the key cannot overwrite each other's.
          await issueAll([() => keys.add(fresh, subject), () => meta.put(1, KEY_CREATED + subject)]);
          return fresh.slice();
        });
    if (key === "erased") throw new SubjectErasedError(subject);
    if (key === "missing") throw this.missing(subject);
    this.recorded.add(subject);
    return key;
  }

  /** The subject's key; undefined when none was created or it was destroyed; KeyMissingError when it was lost. */
  async get(subject: string): Promise<Uint8Array | undefined> {
    checkStoredId(subject, "subject");
    const key = await this.connection.transact(
      ["keys", "erasedSubjects", "meta"],
      "readonly",
      `reading the key of subject "${subject}"`,
      async (tx) => {
        const found = await tx.objectStore("keys").get(subject);
        if (found) return found;
        if ((await tx.objectStore("meta").getKey(KEY_CREATED + subject)) === undefined) return undefined;
        return (await tx.objectStore("erasedSubjects").getKey(subject)) === undefined ? "missing" : undefined;
      },
    );
    if (key === "missing") throw this.missing(subject);
    return key && new Uint8Array(key);
  }

  async destroy(subject: string): Promise<void> {
    checkStoredId(subject, "subject");
    // The key row is deleted, not zeroed: IndexedDB gives no control over physical erasure either
    // way (see docs/storage.md); what it guarantees is that no reader gets the key back.
    await this.connection.transact(
      ["keys", "erasedSubjects"],
      "readwrite",
      `destroying the key of subject "${subject}"`,
      (tx) =>
        issueAll([
          () => tx.objectStore("keys").delete(subject),
          () => tx.objectStore("erasedSubjects").put({ subject }),
        ]),
    );
  }

  async isDestroyed(subject: string): Promise<boolean> {
    checkStoredId(subject, "subject");
    const key = await this.connection.transact(["erasedSubjects"], "readonly", `checking subject "${subject}"`, (tx) =>
      tx.objectStore("erasedSubjects").getKey(subject),
    );
    return key !== undefined;
  }

  private missing(subject: string): KeyMissingError {
    return new KeyMissingError(subject, {
      location: `IndexedDB "${this.connection.name}", object store "keys", key ${JSON.stringify(subject)}`,
    });
  }

  async close(): Promise<void> {
    await this.releaseConnection();
  }
}
