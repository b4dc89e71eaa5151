// loomwork/fs: the storage SPIs on the filesystem (Node, Electron main). Never imported by browser code.
import { join, resolve } from "node:path";
import { WARNING_CODES } from "../../actors/constants.js";
import { processWarning, type Warning } from "../../actors/bus.js";
import { ConfigError } from "../../actors/errors.js";
import { compressionOption, type Compression } from "../../stores/compression.js";
import { ReadOnlyStoreError } from "../../stores/errors.js";
import type { Stores } from "../../stores/types.js";
import { FsContentStore } from "./contentStore.js";
import { FsDirectory, pathExists, settled, tightenDirectory } from "./directory.js";
import { FsEventStore } from "./eventStore.js";
import { nodeFsOps, type FsOps } from "./fsOps.js";
import { FsKeyStore } from "./keyStore.js";
import { FsScheduleStore } from "./schedules.js";
import { DirectoryLock, LOCK_FILE } from "./lock.js";
import { DIRTY_MARKER } from "./recovery.js";

/** Options of `fsStores`: the journal directory and tuning. */
export interface FsStoresOptions {
  /** The journal directory, created when missing. One process writes it at a time (a lock file guards it). */
  dir: string;
  /**
   * Acknowledged appends between two catalogue checkpoints: after a crash, open rescans at most
   * what was appended since the last one.
   * @defaultValue 1000
   */
  checkpointEvery?: number;
  /**
   * Opens the directory to read it while another process may be writing it (the CLI's `ls`, `log`, `stats`):
   * no writer lock is taken, nothing is repaired or created, and every write (append, put, snapshot, key)
   * is refused with `ReadOnlyStoreError`. The stores show the journal as it was at open; bytes past the
   * last whole frame of a log (an append in flight) are left alone and not read, and an execution whose
   * first write is still in flight is not listed.
   * @defaultValue false
   */
  readOnly?: boolean;
  /**
   * Compresses what is written from now on: log frames (each append's batch), snapshots, archive segments and
   * blobs, with `"deflate"` (stores/compression.ts: a 4-byte magic, then a zlib deflate stream, the format
   * `CompressionStream("deflate")` reads and writes). A value is stored compressed only when that makes it
   * smaller. Reads take compressed and plain data alike, so the option can be switched at any open: a
   * directory mixing both reads fine. Versions before this option cannot read compressed data. The log
   * header and `catalogue.ckpt` stay plain. See docs/storage.md, "Compression".
   * @defaultValue "none"
   */
  compression?: Compression;
  /**
   * Recovers every log at open (a stat and a header read each, the bytes past the checkpoint's size scanned,
   * damage reported in the catalogue from the open on), even when the last writer closed cleanly. By
   * default, an open after a clean `close()` trusts the catalogue checkpoint that close wrote and recovers
   * each execution at its first use instead (read, append, snapshot, archive): damage made to a log while
   * the directory was closed then shows at that use, not in `listExecutions()`. See docs/storage.md,
   * "Recovery", and ADR 0008. The CLI opens journals with it.
   * @defaultValue false
   */
  verifyAtOpen?: boolean;
  /**
   * Where a warning of the open goes: `LOOM_JOURNAL_PERMISSIONS` when the journal directory is open to other
   * users (group or other mode bits; it is tightened to 0700 when this user owns it). Pass the app's sink,
   * e.g. `(warning) => console.warn(warning.message)`.
   * @defaultValue a process warning (`process.emitWarning`)
   */
  onWarn?: (warning: Warning) => void;
  /** @internal Replaces node:fs operations (fsync, write, rename), for fault-injection tests. */
  fsOps?: Partial<FsOps>;
}

/** The three fs stores over one directory. They share one writer: closing any of them closes all three. */
export interface FsStores extends Stores {
  readonly dir: string;
  events: FsEventStore;
  content: FsContentStore;
  keys: FsKeyStore;
  /** The schedules (loomwork/schedules), in `schedules.json`. */
  schedules: FsScheduleStore;
  /**
   * Waits for running operations, checkpoints the catalogue (a clean checkpoint, which the next open trusts
   * instead of reading every log: docs/storage.md, "After a clean close") and releases the writer lock. Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Opens (or creates) a journal directory: recovers every execution (a torn tail past the last durable size is
 * truncated; damage before it, a missing or cut log, or a log behind its snapshot is reported: the execution
 * stays listed with `ExecutionInfo.damaged` and its reads fail with `JournalCorruptionError`; nothing is
 * deleted, see docs/storage.md "Recovery"), takes the writer lock, and returns durable stores: a resolved
 * write is fsync'd. After a clean `close()` the open reads the checkpoint that close wrote instead of every
 * log, and recovers each execution at its first use (`verifyAtOpen` recovers them all at open).
 * Rejects with `WriterLockedError` when another live process holds the directory.
 *
 * @example
 * const stores = await fsStores({ dir: "./.loomwork" });
 * const app = createApp(defineConfig({ stores, effects }));
 * // ...
 * await stores.close();
 */
export async function fsStores(options: FsStoresOptions): Promise<FsStores> {
  const checkpointEvery = options.checkpointEvery ?? 1000;
  if (!Number.isInteger(checkpointEvery) || checkpointEvery < 1) {
    throw new RangeError(
      `fsStores: checkpointEvery must be a positive integer (appends between checkpoints); got ${checkpointEvery}.`,
    );
  }
  const dir = resolve(options.dir);
  const readOnly = options.readOnly === true;
  const directory = new FsDirectory(
    dir,
    { ...nodeFsOps, ...options.fsOps },
    readOnly,
    compressionOption(options.compression, "fsStores"),
  );
  if (readOnly) return openReadOnly(directory, checkpointEvery, options.verifyAtOpen === true);
  await directory.ensureDir(dir);
  const onWarn = options.onWarn;
  if (onWarn !== undefined && typeof onWarn !== "function")
    throw new ConfigError("fsStores.onWarn", `a function (warning) => void; got ${typeof onWarn}.`);
  const code = WARNING_CODES.journalPermissions;
  await tightenDirectory(dir, (message) => (onWarn ? onWarn({ code, message }) : processWarning(message, code)));
  const lock = await DirectoryLock.acquire(dir);
  let events: FsEventStore | undefined;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await directory.quiesce();
      try {
        await events?.shutdown();
      } finally {
        await lock.release();
      }
    })());
  try {
    // Independent entries of the directory: swept, then opened, concurrently (a resume waits for the open).
    const [names] = await settled([lock.removeLeftovers(), directory.sweepLeftovers()]);
    // A lock taken over from a dead writer: that writer did not close cleanly, whatever the checkpoint says.
    // The directory's listing under the lock says whether catalogue.dirty is there (no lookup of its own).
    const trust = !lock.tookOver && options.verifyAtOpen !== true;
    const opening = FsEventStore.open(directory, checkpointEvery, close, trust, names.includes(DIRTY_MARKER)).then(
      (opened) => (events = opened),
    );
    const [, content, keys] = await settled([
      opening,
      FsContentStore.open(directory, close),
      FsKeyStore.open(directory, close),
    ] as const);
    return { dir, events: events!, content, keys, schedules: new FsScheduleStore(directory), close };
  } catch (error) {
    await close();
    throw error;
  }
}

// No lock, no leftovers swept: a reader of a directory another process may own.
async function openReadOnly(directory: FsDirectory, checkpointEvery: number, verifyAtOpen: boolean): Promise<FsStores> {
  if (!(await pathExists(directory.dir)))
    throw new ReadOnlyStoreError(
      `The fs stores on ${directory.dir} (no such directory; a read-only open creates nothing)`,
    );
  // A writer's lock (live, or left by a crash): its checkpoint is not trusted; the logs are recovered as they are.
  const trust = !verifyAtOpen && !(await pathExists(join(directory.dir, LOCK_FILE)));
  let events: FsEventStore | undefined;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await directory.quiesce();
      await events?.shutdown();
    })());
  try {
    events = await FsEventStore.open(directory, checkpointEvery, close, trust);
    const content = await FsContentStore.open(directory, close);
    const keys = await FsKeyStore.open(directory, close);
    return { dir: directory.dir, events, content, keys, schedules: new FsScheduleStore(directory), close };
  } catch (error) {
    await close();
    throw error;
  }
}

export { FsContentStore } from "./contentStore.js";
export { FsEventStore } from "./eventStore.js";
export { FsKeyStore } from "./keyStore.js";
export { FsScheduleStore } from "./schedules.js";
/** @internal The fault-injection seam of `FsStoresOptions.fsOps`. */
export type { FsOps } from "./fsOps.js";
export {
  ControlInUseError,
  ControlOptionsError,
  ControlSocketError,
  controlSocketPath,
  MAX_CONTROL_LINE_BYTES,
  serveControl,
} from "./control.js";
export type { ControlEvent, ControlledApp, ControlServer, ServeControlOptions } from "./control.js";
