// The KeyStore on node:fs: keys/<name>.key holds a subject's 32-byte key, keys/<name>.erased its tombstone,
// keys/<name>.created the record that a key was made for the subject.
//
// A key once handed out is never silently replaced: `.created` is written (durably) after the key file
// and before getOrCreate returns, so data can only be sealed under a key that has one. A `.created` with
// neither key nor tombstone is a lost key (a deleted file): KeyMissingError on every get and
// getOrCreate, never a fresh key. A crash between the key file and `.created` leaves a key without a
// record, which open completes (as it does for key files written before `.created` existed).
//
// Destroy order: tombstone first (durable), then the key file is overwritten with zeros, fsync'd and
// unlinked. A crash in between leaves a tombstone beside a key: the subject already reads as erased,
// and the next open finishes the shred. Overwriting is best effort on copy-on-write filesystems and
// SSDs (old blocks may survive); full-disk encryption covers that.
import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { JournalCorruptionError, KeyMissingError, SubjectErasedError } from "../../stores/errors.js";
import { checkStoredId } from "../../stores/ids.js";
import { KEY_STORE_SPI_VERSION, type KeyStore } from "../../stores/types.js";
import { entryName, hasCode, KeyedMutex, listing, pathExists, type FsDirectory } from "./directory.js";
import { encodeJsonFrame } from "./framing.js";
import { readSingleFrame } from "./journalFiles.js";

const KEY_BYTES = 32;

/** The filesystem KeyStore; open it with `fsStores`. */
export class FsKeyStore implements KeyStore {
  readonly spiVersion = KEY_STORE_SPI_VERSION;
  private readonly mutex = new KeyedMutex();
  private readonly keys = new Map<string, Uint8Array>();
  private readonly erased = new Set<string>();
  /** Subjects known to have a `.created` record (a cache: the file is the truth). */
  private readonly created = new Set<string>();

  private constructor(
    private readonly directory: FsDirectory,
    private readonly keysDir: string,
    private readonly onClose: () => Promise<void>,
  ) {}

  static async open(directory: FsDirectory, onClose: () => Promise<void>): Promise<FsKeyStore> {
    const keysDir = join(directory.dir, "keys");
    await directory.ensureDir(keysDir);
    const store = new FsKeyStore(directory, keysDir, onClose);
    // Listed synchronously, as the open's other small operations are (directory.ts); a read-only open may find no folder.
    const names = new Set(directory.readOnly ? (listing(keysDir) ?? []) : readdirSync(keysDir));
    // The repairs below write; a read-only store leaves them to the writer's next open.
    if (directory.readOnly) return store;
    for (const name of names) {
      const key = name.replace(/\.erased$/, ".key");
      if (key !== name && names.has(key)) await store.shred(join(keysDir, key));
    }
    for (const name of names) {
      const stem = name.replace(/\.key$/, "");
      if (stem === name || names.has(`${stem}.erased`) || names.has(`${stem}.created`)) continue;
      // A key without its record: written by an older loomwork, or a crash right after the key file.
      const subject = await store.subjectOfKeyFile(stem);
      if (subject !== undefined) await store.recordCreated(subject);
    }
    return store;
  }

  private paths(subject: string): { key: string; tombstone: string; created: string } {
    const name = entryName(subject);
    return {
      key: join(this.keysDir, `${name}.key`),
      tombstone: join(this.keysDir, `${name}.erased`),
      created: join(this.keysDir, `${name}.created`),
    };
  }

  async getOrCreate(subject: string): Promise<Uint8Array> {
    checkStoredId(subject, "subject");
    return this.directory.read(() =>
      this.mutex.run(subject, async () => {
        const existing = await this.load(subject);
        if (existing) return existing.slice();
        return this.directory.write(async () => {
          const key = new Uint8Array(randomBytes(KEY_BYTES));
          await this.directory.writeFileAtomic(
            this.paths(subject).key,
            encodeJsonFrame({ subject, key: Buffer.from(key).toString("base64") }),
          );
          await this.recordCreated(subject);
          this.keys.set(subject, key);
          return key.slice();
        });
      }),
    );
  }

  async get(subject: string): Promise<Uint8Array | undefined> {
    checkStoredId(subject, "subject");
    return this.directory.read(() =>
      this.mutex.run(subject, async () => {
        try {
          return (await this.load(subject))?.slice();
        } catch (error) {
          if (error instanceof SubjectErasedError) return undefined;
          throw error;
        }
      }),
    );
  }

  async destroy(subject: string): Promise<void> {
    checkStoredId(subject, "subject");
    await this.directory.write(() =>
      this.mutex.run(subject, async () => {
        const { key, tombstone } = this.paths(subject);
        if (!(await pathExists(tombstone)))
          await this.directory.writeFileAtomic(tombstone, encodeJsonFrame({ subject }));
        this.erased.add(subject);
        this.keys.get(subject)?.fill(0);
        this.keys.delete(subject);
        await this.shred(key);
      }),
    );
  }

  async isDestroyed(subject: string): Promise<boolean> {
    checkStoredId(subject, "subject");
    return this.directory.read(async () => this.erased.has(subject) || pathExists(this.paths(subject).tombstone));
  }

  /** Closes the three fs stores sharing this directory and releases the writer lock. */
  async close(): Promise<void> {
    await this.onClose();
  }

  // The subject's key, undefined when none was created; rejects once the subject is erased, and with
  // KeyMissingError when one was created and its file is gone.
  private async load(subject: string): Promise<Uint8Array | undefined> {
    if (this.erased.has(subject)) throw new SubjectErasedError(subject);
    const cached = this.keys.get(subject);
    if (cached) return cached;
    const { key, tombstone } = this.paths(subject);
    if (await pathExists(tombstone)) {
      this.erased.add(subject);
      throw new SubjectErasedError(subject);
    }
    const value = (await readSingleFrame(key)) as { subject?: string; key?: string } | undefined;
    if (!value) {
      if (this.created.has(subject) || (await pathExists(this.paths(subject).created)))
        throw new KeyMissingError(subject, { location: key });
      return undefined;
    }
    const bytes = typeof value.key === "string" ? new Uint8Array(Buffer.from(value.key, "base64")) : undefined;
    if (value.subject !== subject || bytes?.length !== KEY_BYTES)
      throw new JournalCorruptionError(key, 0, "not a key of this subject");
    this.keys.set(subject, bytes);
    return bytes;
  }

  /** Durably records that `subject` has a key; written only once the key file itself is durable. */
  private async recordCreated(subject: string): Promise<void> {
    if (!this.created.has(subject))
      await this.directory.writeFileAtomic(this.paths(subject).created, encodeJsonFrame({ subject }));
    this.created.add(subject);
  }

  // The subject a key file names; undefined when it is unreadable (load reports that, for that subject only).
  private async subjectOfKeyFile(stem: string): Promise<string | undefined> {
    const value = (await readSingleFrame(join(this.keysDir, `${stem}.key`)).catch(() => undefined)) as
      { subject?: unknown } | undefined;
    return typeof value?.subject === "string" && entryName(value.subject) === stem ? value.subject : undefined;
  }

  private async shred(path: string): Promise<void> {
    let handle;
    try {
      handle = await open(path, "r+");
    } catch (error) {
      if (hasCode(error, "ENOENT")) return;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      await this.directory.ops.write(handle, new Uint8Array(size), 0, path);
      await this.directory.ops.fsync(handle, path);
    } finally {
      await handle.close();
    }
    await unlink(path);
    await this.directory.ops.fsyncDir(this.keysDir);
  }
}
