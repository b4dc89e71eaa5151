// The ContentStore on node:fs: blobs by SHA-256 under content/blobs/<ab>/<cd>/<hex>.
//
// Touch times live in each blob file's mtime, in whole seconds (any filesystem with 1 s mtimes
// keeps them; a probe before the first write refuses one that does not). The touch clock is a hybrid:
// C = max(persisted clock, wall seconds) when the store first writes, and touchClock() moves it to
// max(wall seconds, C + 1) and persists it (content/clock) before returning. A put touches at C, so a
// put that starts after touchClock() returned T touches at >= T, and T is above every earlier touch.
// The probe and the clock read wait for the first write (put, delete, touchClock): an open that only
// resumes an execution (reads, if anything, from this store) does neither, so it pays for no probe or clock read.
import { opendir, open, readdir, readFile, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { contentAddress } from "../../stores/bytes.js";
import { STORE_ERROR_CODES } from "../../stores/constants.js";
import { JournalCorruptionError, LoomworkError } from "../../stores/errors.js";
import { isCompressed } from "../../stores/compression.js";
import { CONTENT_STORE_SPI_VERSION, type ContentInfo, type ContentStore } from "../../stores/types.js";
import { hasCode, KeyedMutex, pathExists, settled, type FsDirectory } from "./directory.js";
import { encodeJsonFrame, plainPayload, smaller } from "./framing.js";
import { PRIVATE_FILE_MODE } from "./fsOps.js";
import { readSingleFrame } from "./journalFiles.js";

const ADDRESS = /^sha256:([0-9a-f]{64})$/;
const HEX = /^[0-9a-f]{64}$/;
const FAN = /^[0-9a-f]{2}$/;

const wallSeconds = (): number => Math.floor(Date.now() / 1000);

/** The filesystem ContentStore; open it with `fsStores`. Plain (not sealing): wrap it in EncryptingContentStore to seal. */
export class FsContentStore implements ContentStore {
  readonly spiVersion = CONTENT_STORE_SPI_VERSION;
  readonly sealsContent = false;
  private readonly mutex = new KeyedMutex();
  private readonly blobsDir: string;
  private readonly clockPath: string;
  /** The touch clock; read (and the filesystem probed) by `writable()` before the first write. */
  private clock = 0;
  private ready: Promise<void> | undefined;

  private constructor(
    private readonly directory: FsDirectory,
    private readonly onClose: () => Promise<void>,
  ) {
    this.blobsDir = join(directory.dir, "content", "blobs");
    this.clockPath = join(directory.dir, "content", "clock");
  }

  static async open(directory: FsDirectory, onClose: () => Promise<void>): Promise<FsContentStore> {
    await directory.ensureDir(join(directory.dir, "content", "blobs"));
    return new FsContentStore(directory, onClose);
  }

  /**
   * Before the first write: probes that the filesystem keeps mtimes to the second, and reads the persisted
   * clock meanwhile. Once; a failed probe refuses every write with the same error.
   */
  private writable(): Promise<void> {
    return (this.ready ??= settled([probeSecondMtimes(this.directory), readSingleFrame(this.clockPath)] as const).then(
      ([, clock]) => {
        const persisted = (clock as { clock?: number } | undefined)?.clock ?? 0;
        this.clock = Math.max(persisted, this.clock, wallSeconds());
      },
    ));
  }

  private pathOf(address: string): string | undefined {
    const hex = ADDRESS.exec(address)?.[1];
    return hex && join(this.blobsDir, hex.slice(0, 2), hex.slice(2, 4), hex);
  }

  async put(bytes: Uint8Array): Promise<string> {
    const address = await contentAddress(bytes);
    const path = this.pathOf(address)!;
    await this.directory.write(() =>
      this.mutex.run(address, async () => {
        await this.writable();
        const touch = this.clock;
        let handle;
        try {
          handle = await open(path, "r+");
        } catch (error) {
          if (!hasCode(error, "ENOENT")) throw error;
          await this.directory.ensureDir(dirname(path));
          // Compressed (magic + deflate) only when asked and smaller; `get` tells the two forms apart.
          await this.directory.writeFileAtomic(
            path,
            this.directory.compression === "none" ? bytes : smaller(bytes),
            touch,
          );
          return;
        }
        try {
          await handle.utimes(touch, touch);
          await this.directory.ops.fsync(handle, path);
        } finally {
          await handle.close();
        }
      }),
    );
    return address;
  }

  async get(address: string): Promise<Uint8Array | undefined> {
    const path = this.pathOf(address);
    if (!path) return undefined;
    return this.directory.read(async () => {
      let bytes: Buffer;
      try {
        bytes = await readFile(path);
      } catch (error) {
        if (hasCode(error, "ENOENT")) return undefined;
        throw error;
      }
      if ((await contentAddress(bytes)) === address)
        return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      // Not the plain bytes: a compressed blob (stores/compression.ts) whose inflated bytes have the address.
      if (isCompressed(bytes)) {
        let plain: Uint8Array | undefined;
        try {
          plain = plainPayload(bytes);
        } catch {
          plain = undefined;
        }
        if (plain && (await contentAddress(plain)) === address)
          return new Uint8Array(plain.buffer, plain.byteOffset, plain.byteLength);
      }
      throw new JournalCorruptionError(path, 0, "the blob's bytes do not match its address");
    });
  }

  async has(address: string): Promise<boolean> {
    const path = this.pathOf(address);
    if (!path) return false;
    return this.directory.read(() => pathExists(path));
  }

  async delete(address: string): Promise<boolean> {
    return this.deleteWhen(address, () => true);
  }

  async deleteIfUntouchedSince(address: string, cutoff: number): Promise<boolean> {
    return this.deleteWhen(address, (touchedAt) => touchedAt < cutoff);
  }

  // Serialized with put of the same address: a put that wins the race touches first and is seen.
  private async deleteWhen(address: string, test: (touchedAt: number) => boolean): Promise<boolean> {
    const path = this.pathOf(address);
    if (!path) return false;
    return this.directory.write(() =>
      this.mutex.run(address, async () => {
        await this.writable();
        let touchedAt: number;
        try {
          touchedAt = Math.floor((await stat(path)).mtimeMs / 1000);
        } catch (error) {
          if (hasCode(error, "ENOENT")) return false;
          throw error;
        }
        if (!test(touchedAt)) return false;
        await unlink(path);
        await this.directory.ops.fsyncDir(dirname(path));
        return true;
      }),
    );
  }

  async touchClock(): Promise<number> {
    return this.directory.write(() =>
      this.mutex.run("\0clock", async () => {
        await this.writable();
        const next = Math.max(wallSeconds(), this.clock + 1);
        await this.directory.writeFileAtomic(this.clockPath, encodeJsonFrame({ clock: next }));
        this.clock = next;
        return next;
      }),
    );
  }

  /** Streams every blob: directories are read as the walk reaches them, a leaf directory entry by entry. */
  async *list(): AsyncIterable<ContentInfo> {
    this.directory.assertOpen();
    for (const a of await sortedNames(this.blobsDir, FAN)) {
      for (const b of await sortedNames(join(this.blobsDir, a), FAN)) {
        const leaf = join(this.blobsDir, a, b);
        let entries;
        try {
          entries = await opendir(leaf);
        } catch (error) {
          if (hasCode(error, "ENOENT")) continue;
          throw error;
        }
        for await (const entry of entries) {
          if (!HEX.test(entry.name)) continue;
          this.directory.assertOpen();
          try {
            const info = await stat(join(leaf, entry.name));
            yield { address: `sha256:${entry.name}`, size: info.size, touchedAt: Math.floor(info.mtimeMs / 1000) };
          } catch (error) {
            if (!hasCode(error, "ENOENT")) throw error;
          }
        }
      }
    }
  }

  /** Closes the three fs stores sharing this directory and releases the writer lock. */
  async close(): Promise<void> {
    await this.onClose();
  }
}

async function sortedNames(dir: string, pattern: RegExp): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => pattern.test(n)).sort();
  } catch (error) {
    if (hasCode(error, "ENOENT")) return [];
    throw error;
  }
}

// Touch times are whole seconds in mtimes: a filesystem that rounds them (FAT's 2 s) would make a
// fresh put look older than a cutoff and let a sweep delete it. Refuse it before the first write instead.
async function probeSecondMtimes(directory: FsDirectory): Promise<void> {
  const probe = directory.tmpPath();
  const odd = Math.floor(wallSeconds() / 2) * 2 + 1;
  const handle = await open(probe, "wx", PRIVATE_FILE_MODE);
  try {
    await handle.utimes(odd, odd);
  } finally {
    await handle.close();
  }
  const kept = Math.floor((await stat(probe)).mtimeMs / 1000);
  await unlink(probe);
  if (kept !== odd) {
    throw new LoomworkError(
      STORE_ERROR_CODES.fsUnsupported,
      `${directory.dir} does not keep file modification times to the second (set ${odd}, read ${kept}); ` +
        `the content store keeps touch times there. Put the journal directory on ext4, XFS, Btrfs, APFS or NTFS.`,
    );
  }
}
