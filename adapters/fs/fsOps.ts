// The seam between the adapter and node:fs for the operations whose failure matters: tests swap
// them to count fsyncs or to make one fail with EIO. Everything else calls node:fs directly.
import { open, rename } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";

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
