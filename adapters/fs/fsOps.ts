// The seam between the adapter and node:fs for the operations whose failure matters: tests swap
// them to count fsyncs or to make one fail with EIO. Everything else calls node:fs directly.
import { open, rename } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";

/**
 * The mode of every file the adapter creates (logs, snapshots, segments, blobs, keys, the lock, the
 * catalogue): the owner's alone. Given to the call that creates the file, never applied after it, so no
 * other user can open it at any moment; a umask only removes bits, so the result is the same under any umask.
 */
export const PRIVATE_FILE_MODE = 0o600;

/** The mode of every directory the adapter creates (the journal directory, its parents it makes, and every folder inside). */
export const PRIVATE_DIR_MODE = 0o700;

export interface FsOps {
  /** Makes a file's data and metadata durable (fsync). */
  fsync(handle: FileHandle, path: string): Promise<void>;
  /** Makes a directory's entries durable: a created, renamed or removed name inside it. */
  fsyncDir(path: string): Promise<void>;
  /** Writes every byte of `bytes` at `position`. */
  write(handle: FileHandle, bytes: Uint8Array, position: number, path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
}

export const nodeFsOps: FsOps = {
  fsync: (handle) => handle.sync(),
  async fsyncDir(path) {
    // Windows cannot open a directory for flushing; NTFS journals its directory entries itself.
    if (process.platform === "win32") return;
    const handle = await open(path, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  async write(handle, bytes, position) {
    let done = 0;
    while (done < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
      done += bytesWritten;
    }
  },
  rename: (from, to) => rename(from, to),
};
