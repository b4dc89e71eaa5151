// Opening a journal directory: the catalogue checkpoint and the recovery of each execution's log.
//
// The catalogue (ExecutionInfo of every execution) is rebuilt from the logs, helped by a checkpoint
// file (catalogue.ckpt) written atomically at open, at close and every N appends. A checkpoint entry
// { fileId, size, info } is trusted for a log only when the log still has that fileId (logs are
// append-only between rewrites, and every rewrite draws a new fileId) and is at least that long:
// then only the bytes after `size` are scanned. So a clean open reads one header per execution,
// and a crashed one also reads what was written since the last checkpoint. Without a usable entry
// the whole log is scanned, folded from the header's base.
import { open, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { foldCatalogue } from "../../stores/catalogue.js";
import { JournalCorruptionError } from "../../stores/errors.js";
import type { ExecutionInfo } from "../../stores/types.js";
import { hasCode, type FsDirectory } from "./directory.js";
import { encodeJsonFrame, FRAME_HEADER_BYTES, scanFrames } from "./framing.js";
import { batchRecords, executionsDir, ExecutionPaths, headerProblem, readRange, readSingleFrame, type LogHeader } from "./journalFiles.js";

const CHECKPOINT_FORMAT = "loomwork-catalogue";

export interface CheckpointEntry {
  fileId: string;
  /** Bytes of the log that were durable and folded into `info`. */
  size: number;
  info: ExecutionInfo;
}

export const checkpointPath = (root: string): string => join(root, "catalogue.ckpt");

/** The checkpoint by execution file name; empty when absent or unreadable (it is only a cache). */
export async function loadCheckpoint(root: string): Promise<Map<string, CheckpointEntry>> {
  try {
    const value = (await readSingleFrame(checkpointPath(root))) as { format?: string; entries?: [string, CheckpointEntry][] } | undefined;
    if (value?.format === CHECKPOINT_FORMAT && Array.isArray(value.entries)) return new Map(value.entries);
  } catch (error) {
    if (!(error instanceof JournalCorruptionError)) throw error;
  }
  return new Map();
}

export async function saveCheckpoint(directory: FsDirectory, entries: [string, CheckpointEntry][]): Promise<void> {
  await directory.writeFileAtomic(checkpointPath(directory.dir), encodeJsonFrame({ format: CHECKPOINT_FORMAT, version: 1, entries }));
}

export interface RecoveredExecution {
  executionId: string;
  name: string;
  fileId: string;
  /** The header's `archivedThrough` (segments may cover more after a crash mid-archive). */
  headerArchivedThrough: number;
  /** Durable bytes of the log after tail repair. */
  size: number;
  /** Undefined only when corruption hides even the first record. */
  info?: ExecutionInfo;
  corruption?: JournalCorruptionError;
}

async function readHeader(path: string, size: number): Promise<{ value: unknown; end: number } | undefined> {
  let bytes = await readRange(path, 0, Math.min(size, 4096));
  if (bytes.length >= FRAME_HEADER_BYTES) {
    const needed = FRAME_HEADER_BYTES + bytes.readUInt32LE(0);
    if (needed > bytes.length && needed <= size) bytes = await readRange(path, 0, needed);
    else if (needed < bytes.length) bytes = bytes.subarray(0, needed);
  }
  const first = scanFrames(bytes).frames[0];
  return first && { value: first.value, end: first.end };
}

async function truncateTail(directory: FsDirectory, path: string, length: number): Promise<void> {
  const handle = await open(path, "r+");
  try {
    await handle.truncate(length);
    await directory.ops.fsync(handle, path);
  } finally {
    await handle.close();
  }
}

// A log that never held an acknowledged record: its creation was cut short by a crash.
async function discard(directory: FsDirectory, paths: ExecutionPaths): Promise<undefined> {
  await rm(paths.dir, { recursive: true, force: true });
  await directory.ops.fsyncDir(executionsDir(directory.dir));
  return undefined;
}

/**
 * Recovers one execution directory: truncates a torn tail, reports a damaged middle frame as
 * `corruption`, and folds the catalogue entry. Undefined when nothing acknowledged is there.
 * Throws JournalCorruptionError only when the damage hides which execution the file belongs to.
 */
export async function recoverExecution(
  directory: FsDirectory,
  name: string,
  entry: CheckpointEntry | undefined,
): Promise<RecoveredExecution | undefined> {
  const paths = new ExecutionPaths(directory.dir, name);
  let size: number;
  try {
    size = (await stat(paths.log)).size;
  } catch (error) {
    if (hasCode(error, "ENOENT")) return discard(directory, paths);
    throw error;
  }
  const first = await readHeader(paths.log, size);
  const problem = first ? headerProblem(first.value, name) : "the journal header frame is damaged";
  if (problem) {
    const scan = scanFrames(await readRange(paths.log, 0, size));
    // Nothing valid at all (an empty file or a torn first write): the creation never completed.
    if (!first && (!scan.bad || scan.bad.torn)) return discard(directory, paths);
    const corruption = new JournalCorruptionError(paths.log, 0, problem);
    const executionId = name.startsWith("x") ? Buffer.from(name.slice(1), "hex").toString("utf8") : entry?.info.executionId;
    if (executionId === undefined) throw corruption;
    return { executionId, name, fileId: "", headerArchivedThrough: 0, size, corruption, ...(entry ? { info: entry.info } : {}) };
  }
  const header = first!.value as LogHeader;
  const executionId = header.executionId;
  const trusted = entry !== undefined && entry.fileId === header.fileId && entry.size >= first!.end && entry.size <= size;
  let info: ExecutionInfo | undefined = trusted ? entry.info : (header.base ?? undefined);
  let end = trusted ? entry.size : first!.end;
  let corruption: JournalCorruptionError | undefined;
  if (end < size) {
    const scan = scanFrames(await readRange(paths.log, end, size), end);
    for (const frame of scan.frames) {
      const records = batchRecords(frame, info?.head ?? header.archivedThrough);
      if (typeof records === "string") {
        corruption = new JournalCorruptionError(paths.log, frame.offset, records);
        break;
      }
      info = foldCatalogue(executionId, info, records);
      end = frame.end;
    }
    if (!corruption && scan.bad) {
      if (!scan.bad.torn) corruption = new JournalCorruptionError(paths.log, scan.bad.offset, scan.bad.reason);
      else await truncateTail(directory, paths.log, scan.bad.offset);
    }
    if (!corruption) size = end;
  }
  if (!info && !corruption) return discard(directory, paths);
  return { executionId, name, fileId: header.fileId, headerArchivedThrough: header.archivedThrough, size, ...(info ? { info } : {}), ...(corruption ? { corruption } : {}) };
}

/** Recovers every execution directory, 32 at a time; the caller holds the writer lock. */
export async function recoverExecutions(directory: FsDirectory): Promise<RecoveredExecution[]> {
  await directory.ensureDir(executionsDir(directory.dir));
  const checkpoint = await loadCheckpoint(directory.dir);
  const names = (await readdir(executionsDir(directory.dir))).filter((n) => /^[xh][0-9a-f]*$/.test(n));
  const recovered: RecoveredExecution[] = [];
  for (let i = 0; i < names.length; i += 32) {
    const batch = await Promise.all(names.slice(i, i + 32).map((n) => recoverExecution(directory, n, checkpoint.get(n))));
    for (const execution of batch) if (execution) recovered.push(execution);
  }
  return recovered;
}
