// The seam between the adapter and node:fs for the operations whose failure matters: tests swap
// them to count fsyncs or to make one fail with EIO. Everything else calls node:fs directly.
import { writeSync } from "node:fs";
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

/**
 * Writes of at most this many bytes are done synchronously, on the calling thread. Such a write lands in the
 * page cache in microseconds, where a trip through libuv's threadpool costs two thread wake-ups (about 0.1 ms
 * on a virtual machine, more after the thread was idle); a macrostep's append is a few kB. Durability never
 * rests on the write: it comes from the fsync, which stays asynchronous. Larger writes (snapshots) go to the pool.
 */
export const SYNC_WRITE_LIMIT = 64 * 1024;

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
    if (bytes.length <= SYNC_WRITE_LIMIT) {
      while (done < bytes.length) done += writeSync(handle.fd, bytes, done, bytes.length - done, position + done);
      return;
    }
    while (done < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
      done += bytesWritten;
    }
  },
  rename: (from, to) => rename(from, to),
};
