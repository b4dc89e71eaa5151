// The KeyStore on node:fs: keys/<name>.key holds a subject's 32-byte key, keys/<name>.erased its tombstone.
//
// Destroy order: tombstone first (durable), then the key file is overwritten with zeros, fsync'd and
// unlinked. A crash in between leaves a tombstone beside a key: the subject already reads as erased,
// and the next open finishes the shred. Overwriting is best effort on copy-on-write filesystems and
// SSDs (old blocks may survive); full-disk encryption covers that.
import { randomBytes } from "node:crypto";
import { open, readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { JournalCorruptionError, SubjectErasedError } from "../../stores/errors.js";
import { KEY_STORE_SPI_VERSION, type KeyStore } from "../../stores/types.js";
import { entryName, hasCode, KeyedMutex, pathExists, type FsDirectory } from "./directory.js";
import { encodeJsonFrame } from "./framing.js";
import { readSingleFrame } from "./journalFiles.js";

const KEY_BYTES = 32;

/** The filesystem KeyStore; open it with `fsStores`. */
export class FsKeyStore implements KeyStore {
  readonly spiVersion = KEY_STORE_SPI_VERSION;
  private readonly mutex = new KeyedMutex();
  private readonly keys = new Map<string, Uint8Array>();
  private readonly erased = new Set<string>();

  private constructor(
    private readonly directory: FsDirectory,
    private readonly keysDir: string,
    private readonly onClose: () => Promise<void>,
  ) {}

  static async open(directory: FsDirectory, onClose: () => Promise<void>): Promise<FsKeyStore> {
    const keysDir = join(directory.dir, "keys");
    await directory.ensureDir(keysDir);
    const store = new FsKeyStore(directory, keysDir, onClose);
    const names = new Set(await readdir(keysDir));
    for (const name of names) {
      const key = name.replace(/\.erased$/, ".key");
      if (key !== name && names.has(key)) await store.shred(join(keysDir, key));
    }
    return store;
  }

  private paths(subject: string): { key: string; tombstone: string } {
    const name = entryName(subject);
    return { key: join(this.keysDir, `${name}.key`), tombstone: join(this.keysDir, `${name}.erased`) };
  }

  async getOrCreate(subject: string): Promise<Uint8Array> {
    return this.directory.read(() =>
      this.mutex.run(subject, async () => {
        const existing = await this.load(subject);
        if (existing) return existing.slice();
        return this.directory.write(async () => {
          const key = new Uint8Array(randomBytes(KEY_BYTES));
          await this.directory.writeFileAtomic(this.paths(subject).key, encodeJsonFrame({ subject, key: Buffer.from(key).toString("base64") }));
          this.keys.set(subject, key);
          return key.slice();
        });
      }),
    );
  }

  async get(subject: string): Promise<Uint8Array | undefined> {
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
    await this.directory.write(() =>
      this.mutex.run(subject, async () => {
        const { key, tombstone } = this.paths(subject);
        if (!(await pathExists(tombstone))) await this.directory.writeFileAtomic(tombstone, encodeJsonFrame({ subject }));
        this.erased.add(subject);
        this.keys.get(subject)?.fill(0);
        this.keys.delete(subject);
        await this.shred(key);
      }),
    );
  }

  async isDestroyed(subject: string): Promise<boolean> {
    return this.directory.read(async () => this.erased.has(subject) || pathExists(this.paths(subject).tombstone));
  }

  /** Closes the three fs stores sharing this directory and releases the writer lock. */
  async close(): Promise<void> {
    await this.onClose();
  }

  // The subject's key, undefined when none was created; rejects once the subject is erased.
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
    if (!value) return undefined;
    const bytes = typeof value.key === "string" ? new Uint8Array(Buffer.from(value.key, "base64")) : undefined;
    if (value.subject !== subject || bytes?.length !== KEY_BYTES) throw new JournalCorruptionError(key, 0, "not a key of this subject");
    this.keys.set(subject, bytes);
    return bytes;
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
