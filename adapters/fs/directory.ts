// The state the three fs stores share: one journal directory, one writer lock, one failure.
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readdirSync } from "node:fs";
import { chmod, mkdir, open, rm, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { STORE_ERROR_CODES } from "../../stores/constants.js";
import { LoomworkError, ReadOnlyStoreError, StorageQuotaError, WriterFailedError } from "../../stores/errors.js";
import type { Compression } from "../../stores/compression.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, type FsOps } from "./fsOps.js";

/** True for a Node system error (`code` such as EIO, ENOSPC): an I/O failure, not a refusal of ours. */
export function isSystemError(error: unknown): error is NodeJS.ErrnoException {
  return (
    error instanceof Error &&
    typeof (error as NodeJS.ErrnoException).code === "string" &&
    !(error instanceof LoomworkError)
  );
}

export function hasCode(error: unknown, code: string): boolean {
  return isSystemError(error) && error.code === code;
}

/** The names in directory `path`, read synchronously (a small listing at open); undefined when it does not exist. */
export function listing(path: string): string[] | undefined {
  try {
    return readdirSync(path);
  } catch (error) {
    if (hasCode(error, "ENOENT")) return undefined;
    throw error;
  }
}

export async function pathExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (hasCode(error, "ENOENT")) return false;
    throw error;
  }
}

/**
 * Reports a journal directory that users other than its owner can read, write or enter (group or other
 * bits set: made by hand, or by a version before files were created private), and tightens it to the
 * owner's bits alone when this process's user owns it: inside a 0700 directory no other user reaches a
 * file, whatever its own mode. Another user's directory is only reported. Nothing to do on Windows.
 */
export async function tightenDirectory(dir: string, warn: (message: string) => void): Promise<void> {
  if (process.platform === "win32") return;
  const info = await stat(dir);
  const mode = info.mode & 0o777;
  if ((mode & 0o077) === 0) return;
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid === uid) {
    await chmod(dir, mode & PRIVATE_DIR_MODE);
    warn(
      `fsStores: the journal directory ${dir} was mode ${mode.toString(8)}, open to other users: tightened to ${(mode & PRIVATE_DIR_MODE).toString(8)} (this user owns it).`,
    );
    return;
  }
  warn(
    `fsStores: the journal directory ${dir} is mode ${mode.toString(8)}, open to other users, and owned by uid ${info.uid}, not this process's uid ${uid ?? "?"}: ` +
      `left as it is. Have its owner run chmod 700 ${dir}, or open a directory this user owns.`,
  );
}

/** Promise.all that waits for every task to settle before rejecting with the first failure (an open that fails must not close the stores while one of its tasks still runs). */
export async function settled<T extends readonly unknown[]>(
  tasks: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const results = await Promise.allSettled(tasks);
  const failed = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
  if (failed) throw failed.reason;
  return results.map((result) => (result as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}

/**
 * The file-name form of an execution id or subject. Ids are never used as paths: short well-formed
 * ids become `x<hex of UTF-8>` (reversible, case-insensitive-safe), anything else `h<sha256 of its
 * JSON text>` (JSON keeps lone surrogates apart, UTF-8 would merge them). Files also store the id.
 */
export function entryName(id: string): string {
  const utf8 = Buffer.from(id, "utf8");
  if (utf8.length <= 100 && utf8.toString("utf8") === id) return `x${utf8.toString("hex")}`;
  return `h${createHash("sha256").update(JSON.stringify(id)).digest("hex")}`;
}

/** Runs tasks with the same key one at a time, in call order; different keys run concurrently. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = previous.then(() => new Promise<void>((resolve) => (release = resolve)));
    this.tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

export class FsDirectory {
  readonly tmpDir: string;
  readonly trashDir: string;
  private writerFailure: WriterFailedError | undefined;
  private closed = false;
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    readonly dir: string,
    readonly ops: FsOps,
    /** Read-only: no lock, no repair, every write refused with ReadOnlyStoreError (docs/storage.md, "Reading a journal another process writes"). */
    readonly readOnly = false,
    /** How new log frames, snapshots, segments and blobs are written (`FsStoresOptions.compression`); reads take both. */
    readonly compression: Compression = "none",
  ) {
    this.tmpDir = join(dir, "tmp");
    this.trashDir = join(dir, "trash");
  }

  /** The error every write is refused with once an I/O operation failed. */
  get failure(): WriterFailedError | undefined {
    return this.writerFailure;
  }

  assertOpen(): void {
    if (this.closed) {
      throw new LoomworkError(
        STORE_ERROR_CODES.storeClosed,
        `The fs stores on ${this.dir} were closed; open a new fsStores({ dir }) to use the directory again.`,
      );
    }
  }

  assertWritable(): void {
    this.assertOpen();
    if (this.readOnly) throw new ReadOnlyStoreError(`The fs stores on ${this.dir}`);
    if (this.writerFailure) throw this.writerFailure;
  }

  /**
   * Records an I/O failure: from now on every write is refused. Retrying after a failed fsync is
   * unsafe (the kernel may have dropped the dirty pages and report success next time), so the
   * writer stops and a reopen recovers what was durable. Returns the error the failing call rejects with.
   */
  fail(cause: unknown): Error {
    this.writerFailure ??= new WriterFailedError(this.dir, { cause });
    if (hasCode(cause, "ENOSPC") || hasCode(cause, "EDQUOT"))
      return new StorageQuotaError(`writing to ${this.dir}`, { cause });
    return this.writerFailure;
  }

  /** Runs a write: refused once failed or closed; a system error inside fails the writer. */
  async write<T>(task: () => Promise<T>): Promise<T> {
    this.assertWritable();
    return this.track(async () => {
      try {
        return await task();
      } catch (error) {
        throw isSystemError(error) ? this.fail(error) : error;
      }
    });
  }

  /** Runs a read; close() waits for it. */
  async read<T>(task: () => Promise<T>): Promise<T> {
    this.assertOpen();
    return this.track(task);
  }

  private async track<T>(task: () => Promise<T>): Promise<T> {
    const running = task();
    this.inflight.add(running);
    try {
      return await running;
    } finally {
      this.inflight.delete(running);
    }
  }

  /** Refuses new operations and waits for the running ones to settle. */
  async quiesce(): Promise<void> {
    this.closed = true;
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  tmpPath(): string {
    return join(this.tmpDir, `${process.pid}-${randomBytes(8).toString("hex")}`);
  }

  /**
   * Creates `path` (and missing parents) and makes each new entry durable in its parent. The mkdir is
   * synchronous, at open (as the lock and the listings are) and before each blob's write (contentStore.ts
   * `put`): one system call that usually finds the directory there, where an asynchronous one was a trip
   * through libuv's thread pool, which slowed a fresh process's open. The fsyncs of new entries stay asynchronous.
   */
  async ensureDir(path: string): Promise<void> {
    if (this.readOnly) return;
    const first = mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
    if (first === undefined) return;
    for (let created = path; ; created = dirname(created)) {
      await this.ops.fsyncDir(dirname(created));
      if (created === first) break;
    }
  }

  /**
   * Replaces `path` with `bytes` so a crash leaves either the old file or the new one, whole:
   * temp file -> fsync -> rename -> fsync of the directory. `mtimeSeconds` is set before the fsync.
   */
  async writeFileAtomic(path: string, bytes: Uint8Array, mtimeSeconds?: number): Promise<void> {
    if (this.readOnly) throw new ReadOnlyStoreError(`The fs stores on ${this.dir}`);
    const temp = this.tmpPath();
    const handle = await open(temp, "wx", PRIVATE_FILE_MODE);
    try {
      try {
        await this.ops.write(handle, bytes, 0, temp);
        if (mtimeSeconds !== undefined) await handle.utimes(mtimeSeconds, mtimeSeconds);
        await this.ops.fsync(handle, temp);
      } finally {
        await handle.close();
      }
      await this.ops.rename(temp, path);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    await this.ops.fsyncDir(dirname(path));
  }

  /** Removes leftovers of a crashed process: temp files never renamed, trash never emptied. */
  async sweepLeftovers(): Promise<void> {
    // Usually both are empty: one (synchronous) readdir each instead of removing and re-creating them at every open.
    const sweep = async (path: string) => {
      const names = listing(path);
      if (names?.length === 0) return;
      await rm(path, { recursive: true, force: true });
      await mkdir(path, { recursive: true, mode: PRIVATE_DIR_MODE });
    };
    await settled([sweep(this.tmpDir), sweep(this.trashDir)]);
  }
}
