// Opening a journal directory: the catalogue checkpoint and the recovery of each execution's log.
//
// The catalogue (ExecutionInfo of every execution) is rebuilt from the logs, helped by a checkpoint
// file (catalogue.ckpt) written atomically at open, at close and every N appends. A checkpoint entry
// { fileId, size, info } is trusted for a log only when the log still has that fileId (logs are
// append-only between rewrites, and every rewrite draws a new fileId) and is at least that long:
// then only the bytes after `size` are scanned. So a full recovery reads one header per execution,
// and a crashed one also reads what was written since the last checkpoint. Without a usable entry
// the whole log is scanned, folded from the header's base.
//
// A clean close (ADR 0008) writes the checkpoint with a clean mark: every execution has an entry, each
// entry is the log's exact size. The next open that finds the mark, no `catalogue.dirty` (a writer
// creates it before its first write and removes it after its clean close) and no lock left by a dead
// writer trusts the entries without touching the logs (it lists executions/ only, to recover at once a
// folder the checkpoint does not know or an entry whose folder is gone); each execution is then
// recovered as above at its first use (read, append, snapshot, archive), not at open.
import { readdirSync } from "node:fs";
import { open, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { foldCatalogue } from "../../stores/catalogue.js";
import { JournalCorruptionError, type JournalDamageKind, type JournalSurvivors } from "../../stores/errors.js";
import type { ExecutionDamage, ExecutionInfo, StoredRecord } from "../../stores/types.js";
import { entryName, hasCode, listing, pathExists, type FsDirectory } from "./directory.js";
import { encodeJsonFrame, FRAME_HEADER_BYTES, scanFrames } from "./framing.js";
import {
  batchRecords,
  executionsDir,
  ExecutionPaths,
  headerProblem,
  listSegments,
  readRange,
  readSegment,
  readSingleFrame,
  readSingleFrameSync,
  readSnapshot,
  type LogHeader,
} from "./journalFiles.js";

const CHECKPOINT_FORMAT = "loomwork-catalogue";

/**
 * The key of the clean mark among a clean checkpoint's entries. Readers before ADR 0008 ignore every key
 * that names no execution folder, but count it: their open then finds the checkpoint not current and
 * rewrites it without the mark before their first append, so a crash of an older writer never leaves
 * a clean mark behind.
 */
const CLEAN_KEY = "~clean";

export interface CheckpointEntry {
  fileId: string;
  /** Bytes of the log that were durable and folded into `info`. */
  size: number;
  info: ExecutionInfo;
  /** The log header's `archivedThrough` when above 0 (ADR 0008: a trusted open reads no header; absent: 0 in a clean checkpoint). */
  archivedThrough?: number;
  /**
   * Set once the log was found damaged: the entry is kept (with the durable size it had) so that every
   * later open reports the damage again instead of reading it as a torn tail.
   */
  damaged?: ExecutionDamage;
}

export const checkpointPath = (root: string): string => join(root, "catalogue.ckpt");

/**
 * The marker a writer creates before its first write to the logs after a clean open (ADR 0008). It exists
 * from then until its clean close: while it does, no checkpoint is trusted.
 */
export const DIRTY_MARKER = "catalogue.dirty";
export const dirtyMarkerPath = (root: string): string => join(root, DIRTY_MARKER);

/**
 * The checkpoint by execution file name; empty when absent. `damaged` when the file exists but fails its
 * checksum or format: then nothing tells which bytes of a log were durable, and recovery takes them all as
 * acknowledged (it reports damage instead of truncating it).
 */
export interface Checkpoint {
  entries: Map<string, CheckpointEntry>;
  damaged: boolean;
  /** False when there is no checkpoint file. */
  exists: boolean;
  /** Written by a clean close: complete (every execution), each entry the log's exact size and header. */
  clean: boolean;
}

interface CheckpointFile {
  format?: string;
  entries?: [string, CheckpointEntry][];
  clean?: { executions?: unknown };
}

export async function loadCheckpoint(root: string): Promise<Checkpoint> {
  try {
    const value = readSingleFrameSync(checkpointPath(root)) as CheckpointFile | undefined;
    if (value === undefined) return { entries: new Map(), damaged: false, exists: false, clean: false };
    if (value?.format === CHECKPOINT_FORMAT && Array.isArray(value.entries)) {
      const entries = new Map(value.entries);
      const mark = entries.get(CLEAN_KEY);
      entries.delete(CLEAN_KEY);
      let clean = mark !== undefined && value.clean?.executions === entries.size && mark.size === entries.size;
      for (const entry of clean ? entries.values() : []) {
        if (
          typeof entry?.fileId !== "string" ||
          typeof entry.size !== "number" ||
          typeof entry.info?.executionId !== "string"
        )
          clean = false;
      }
      return { entries, damaged: false, exists: true, clean };
    }
  } catch (error) {
    if (!(error instanceof JournalCorruptionError)) throw error;
  }
  return { entries: new Map(), damaged: true, exists: true, clean: false };
}

/** Writes the checkpoint; `clean` (only from a clean close, every execution in `entries`) adds the clean mark. */
export async function saveCheckpoint(
  directory: FsDirectory,
  entries: [string, CheckpointEntry][],
  clean = false,
): Promise<void> {
  const mark: [string, CheckpointEntry] = [
    CLEAN_KEY,
    { fileId: CLEAN_KEY, size: entries.length, info: { executionId: "", status: "running", startedAt: 0, head: 0 } },
  ];
  const value = clean
    ? { format: CHECKPOINT_FORMAT, version: 1, clean: { executions: entries.length }, entries: [...entries, mark] }
    : { format: CHECKPOINT_FORMAT, version: 1, entries };
  await directory.writeFileAtomic(checkpointPath(directory.dir), encodeJsonFrame(value));
}

export interface RecoveredExecution {
  executionId: string;
  name: string;
  fileId: string;
  /** The header's `archivedThrough` (segments may cover more after a crash mid-archive). */
  headerArchivedThrough: number;
  /** Durable bytes of the log after tail repair; for a damaged log, the durable size it should have. */
  size: number;
  /** Undefined only when corruption hides even the first record and nothing else tells. */
  info?: ExecutionInfo;
  corruption?: JournalCorruptionError;
  /** The checkpoint entry said all of it: no byte past its size, nothing found that it did not know. */
  asCheckpointed?: boolean;
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

// A log that never held an acknowledged record: its creation was cut short by a crash. Only called
// when the directory holds nothing else (no snapshot, no segment) and no checkpoint knew the execution.
async function discard(directory: FsDirectory, paths: ExecutionPaths): Promise<undefined> {
  // Read-only: a creation in progress (another process writes the directory) is not listed yet.
  if (directory.readOnly) return undefined;
  await rm(paths.dir, { recursive: true, force: true });
  await directory.ops.fsyncDir(executionsDir(directory.dir));
  return undefined;
}

/** The names in the execution's directory other than its log. */
async function otherFiles(paths: ExecutionPaths): Promise<string[]> {
  try {
    return (await readdir(paths.dir)).filter((n) => n !== "log");
  } catch (error) {
    if (hasCode(error, "ENOENT")) return [];
    throw error;
  }
}

/** Seq of the execution's snapshot when it is whole; undefined when there is none or it is damaged. */
const wholeSnapshotSeq = (paths: ExecutionPaths, executionId: string): Promise<number | undefined> =>
  readSnapshot(paths, executionId).then(
    (s) => s?.seq,
    () => undefined,
  );

/** What is whole beside a log: the snapshot's seq and the segments (with their records, to fold). */
export async function survey(
  paths: ExecutionPaths,
  executionId: string,
): Promise<{ survives: JournalSurvivors; archived: StoredRecord[] }> {
  const snapshotSeq = await wholeSnapshotSeq(paths, executionId);
  const archives: { fromSeq: number; toSeq: number }[] = [];
  const archived: StoredRecord[] = [];
  for (const { path } of await listSegments(paths)) {
    try {
      const segment = await readSegment(path, executionId);
      archives.push({ fromSeq: segment.fromSeq, toSeq: segment.toSeq });
      if (segment.fromSeq === (archived.at(-1)?.seq ?? 0) + 1) archived.push(...segment.records);
    } catch (error) {
      if (!(error instanceof JournalCorruptionError)) throw error;
    }
  }
  return { survives: { ...(snapshotSeq === undefined ? {} : { snapshotSeq }), archives }, archived };
}

/** The execution id of a directory whose log cannot tell it: from its name, its checkpoint entry, or its snapshot. */
async function idOf(paths: ExecutionPaths, entry: CheckpointEntry | undefined): Promise<string | undefined> {
  if (paths.name.startsWith("x")) return Buffer.from(paths.name.slice(1), "hex").toString("utf8");
  if (entry) return entry.info.executionId;
  // Snapshots and segments store the id too.
  for (const path of [paths.snapshot, ...(await listSegments(paths)).map((s) => s.path)]) {
    const value = (await readSingleFrame(path).catch(() => undefined)) as { executionId?: unknown } | undefined;
    if (typeof value?.executionId === "string" && entryName(value.executionId) === paths.name) return value.executionId;
  }
  return undefined;
}

export const damageOf = (error: JournalCorruptionError): ExecutionDamage => ({
  kind: error.kind,
  file: error.file,
  offset: error.offset,
  message: error.message,
});

const REMEDY_MISSING =
  'Restore the log from a backup; or, to give the execution up, delete it with app.deleteHistory(id) (docs/storage.md, "Recovery").';
const REMEDY_CUT =
  "Restore the log from a backup; or, to accept the loss and continue from what the log holds, delete catalogue.ckpt " +
  'with the directory closed (docs/storage.md, "Recovery").';

/**
 * Recovers one execution directory: truncates a torn tail past the last durable size, reports damage
 * before it as `corruption`, and folds the catalogue entry. Undefined only when nothing in the directory
 * was ever acknowledged (a creation cut short). Throws JournalCorruptionError only when the damage hides
 * which execution the directory belongs to.
 */
export async function recoverExecution(
  directory: FsDirectory,
  name: string,
  entry: CheckpointEntry | undefined,
  checkpointDamaged = false,
): Promise<RecoveredExecution | undefined> {
  const paths = new ExecutionPaths(directory.dir, name);
  // Acknowledged once: a checkpoint listed it (or may have: it is damaged), or a snapshot or segment
  // (written only after the log was durable) exists.
  const acknowledged = async () => entry !== undefined || checkpointDamaged || (await otherFiles(paths)).length > 0;
  // The log cannot be read from its first byte: keep everything, report it.
  const unreadable = async (kind: JournalDamageKind, problem: string): Promise<RecoveredExecution> => {
    const executionId = await idOf(paths, entry);
    if (executionId === undefined) throw new JournalCorruptionError(paths.log, 0, problem, { kind });
    const { survives, archived } = await survey(paths, executionId);
    const corruption = new JournalCorruptionError(paths.log, 0, problem, {
      kind,
      survives: { ...survives, logHead: 0 },
      ...(kind === "missing" ? { remedy: REMEDY_MISSING } : {}),
    });
    const folded = archived.length > 0 ? foldCatalogue(executionId, undefined, archived) : undefined;
    const known = entry?.info ?? folded ?? { executionId, status: "running" as const, startedAt: 0, head: 0 };
    const head = Math.max(known.head, folded?.head ?? 0, survives.snapshotSeq ?? 0);
    return {
      executionId,
      name,
      fileId: entry?.fileId ?? "",
      headerArchivedThrough: 0,
      size: entry?.size ?? 0,
      info: { ...known, head },
      corruption,
    };
  };
  let size: number;
  try {
    size = (await stat(paths.log)).size;
  } catch (error) {
    if (!hasCode(error, "ENOENT")) throw error;
    if (!(await acknowledged())) return discard(directory, paths);
    return unreadable("missing", "the log file is missing");
  }
  const first = await readHeader(paths.log, size);
  if (!first) {
    const bytes = await readRange(paths.log, 0, size);
    const { bad } = scanFrames(bytes);
    // Nothing valid at all (an empty file or a torn first write), or a hole where the first write was lost
    // before a later one that persisted, and nothing else acknowledged: the creation never completed.
    if (!(await acknowledged())) {
      if (!bad || bad.torn) return discard(directory, paths);
      if (isHole(bytes.subarray(0, bad.next))) {
        await keepAside(directory, paths, "none", 0, bytes);
        return discard(directory, paths);
      }
    }
    return unreadable(
      "missing",
      size === 0 ? "the log is empty" : `the log's ${size} bytes hold no whole journal header`,
    );
  }
  const problem = headerProblem(first.value, name);
  if (problem) return unreadable("frame", problem);
  const header = first.value as LogHeader;
  const executionId = header.executionId;
  // The checkpoint's entry speaks for this file only while it has the same fileId (a rewrite draws a new one).
  const same = entry !== undefined && entry.fileId === header.fileId;
  // A damaged checkpoint may have vouched for every byte: take them all as acknowledged.
  const durable = same ? Math.max(entry.size, first.end) : checkpointDamaged ? size : first.end;
  const trusted = same && !entry.damaged && entry.size >= first.end && entry.size <= size;
  let info: ExecutionInfo | undefined = trusted ? entry.info : (header.base ?? undefined);
  let end = trusted ? entry.size : first.end;
  let damage: { offset: number; reason: string; kind: JournalDamageKind } | undefined;
  if (end < size) {
    const from = end;
    const bytes = await readRange(paths.log, from, size);
    const scan = scanFrames(bytes, from);
    for (const frame of scan.frames) {
      const records = batchRecords(frame, info?.head ?? header.archivedThrough);
      if (typeof records === "string") {
        damage = { offset: frame.offset, reason: records, kind: "frame" };
        break;
      }
      info = foldCatalogue(executionId, info, records);
      end = frame.end;
    }
    if (!damage && scan.bad) {
      const { offset, next } = scan.bad;
      // Past the durable size a bad frame is an append that was never acknowledged: cut there when nothing
      // valid follows (a torn write), or when the bytes up to the next valid frame are a hole (zeros: an
      // earlier unsynced write lost while a later one persisted). Damage with data in it, followed by valid
      // frames, looks like a flipped bit in what may have been acknowledged since the checkpoint: report it.
      // Before the durable size everything was acknowledged: report it, unless the file merely ends early
      // (a cut, reported below).
      if (offset >= durable) {
        if (next === undefined || isHole(bytes.subarray(offset - from, next - from)))
          await cutTail(directory, paths, header.fileId, offset, size, next !== undefined);
        else damage = { offset, reason: `${scan.bad.reason}, with valid frames after it`, kind: "frame" };
      } else if (!(next === undefined && size < durable)) {
        const why =
          checkpointDamaged && !same
            ? " (catalogue.ckpt is damaged, so every byte of the log is taken as acknowledged)"
            : "";
        damage = { offset, reason: `${scan.bad.reason}${why}`, kind: "frame" };
      }
    }
  }
  // Bytes the store had made durable are gone: never a torn tail.
  if (!damage && size < durable) {
    damage = {
      offset: size,
      reason: `the log is ${size} bytes, but ${durable} bytes were acknowledged as durable (catalogue checkpoint); what followed byte ${end} is lost`,
      kind: "cut",
    };
  }
  const logHead = info?.head ?? header.archivedThrough;
  let surveyed: Awaited<ReturnType<typeof survey>> | undefined;
  if (!damage && !info) {
    if (!(await acknowledged())) return discard(directory, paths);
    surveyed = await survey(paths, executionId);
    damage = {
      offset: end,
      reason: "the log holds no record, but the execution's snapshot or archive segments exist",
      kind: "missing",
    };
  }
  // Untrusted (after a crash, or without a checkpoint): the snapshot must not be ahead of what the log holds.
  if (!damage && !trusted) {
    const snapshotSeq = await wholeSnapshotSeq(paths, executionId);
    if (snapshotSeq !== undefined && snapshotSeq > logHead)
      damage = { offset: end, reason: behindSnapshotReason(logHead, snapshotSeq, paths), kind: "behind-snapshot" };
  }
  const base = { executionId, name, fileId: header.fileId, headerArchivedThrough: header.archivedThrough };
  if (!damage)
    return {
      ...base,
      size: end,
      ...(info ? { info } : {}),
      ...(trusted && end === size && end === entry.size ? { asCheckpointed: true } : {}),
    };
  surveyed ??= await survey(paths, executionId);
  const remedy = {
    "behind-snapshot": behindSnapshotRemedy(paths),
    cut: REMEDY_CUT,
    missing: REMEDY_MISSING,
    frame: undefined,
    snapshot: undefined,
  }[damage.kind];
  const corruption = new JournalCorruptionError(paths.log, damage.offset, damage.reason, {
    kind: damage.kind,
    survives: { ...surveyed.survives, logHead },
    ...(remedy ? { remedy } : {}),
  });
  const known = (same ? entry.info : undefined) ??
    info ?? { executionId, status: "running" as const, startedAt: 0, head: logHead };
  return { ...base, size: Math.max(durable, end), info: { ...known, head: Math.max(known.head, logHead) }, corruption };
}

export const behindSnapshotReason = (head: number, snapshotSeq: number, paths: ExecutionPaths): string =>
  `the log ends at seq ${head}, but its snapshot ${paths.snapshot} folds the records through seq ${snapshotSeq}: the log lost records the snapshot had seen`;

export const behindSnapshotRemedy = (paths: ExecutionPaths): string =>
  `Restore the log from a backup; or, to accept the loss and resume from what the log holds (the steps after its last seq run again), ` +
  `delete ${paths.snapshot} with the directory closed (docs/storage.md, "Recovery").`;

/** The folder where recovery keeps bytes it cut from a log that held a readable frame; never read nor emptied by loomwork. */
export const recoveredDir = (root: string): string => join(root, "recovered");

async function keepAside(
  directory: FsDirectory,
  paths: ExecutionPaths,
  fileId: string,
  offset: number,
  bytes: Uint8Array,
): Promise<void> {
  if (directory.readOnly) return;
  await directory.ensureDir(recoveredDir(directory.dir));
  await directory.writeFileAtomic(join(recoveredDir(directory.dir), `${paths.name}-${fileId}-${offset}`), bytes);
}

/**
 * Cuts the log at a bad frame past the last durable size: nothing there was acknowledged. When a valid
 * frame follows the damage (an earlier unsynced write lost, a later one persisted), the cut bytes are
 * first kept in `recovered/<name>-<fileId>-<offset>`: recovery never deletes what it could read.
 */
async function cutTail(
  directory: FsDirectory,
  paths: ExecutionPaths,
  fileId: string,
  offset: number,
  size: number,
  readable: boolean,
): Promise<void> {
  // Read-only: the bytes past the last whole frame are left as they are (an append another process has in flight) and not read.
  if (directory.readOnly) return;
  if (readable) await keepAside(directory, paths, fileId, offset, await readRange(paths.log, offset, size));
  await truncateTail(directory, paths.log, offset);
}

const isHole = (bytes: Uint8Array): boolean => bytes.every((b) => b === 0);

/** What the open found: the recovered executions, and those a clean checkpoint vouches for, recovered at first use. */
export interface OpenedCatalogue {
  executions: RecoveredExecution[];
  /** Entries of a trusted clean checkpoint, by execution file name: no log was touched for them. */
  deferred: Map<string, CheckpointEntry>;
  /** The checkpoint on disk already says what the open found (nothing to write before the first append). */
  current: boolean;
  /** The checkpoint is a clean one (trusted or not: with `current`, it needs no rewrite at a clean close). */
  clean: boolean;
  /** `catalogue.dirty` exists (a writer did not close cleanly). */
  dirtyMarker: boolean;
}

/**
 * Recovers every execution directory, 32 at a time; the caller holds the writer lock (or opens read-only).
 * With `trust` (no lock left by a dead writer, and recovery not forced by `verifyAtOpen`), a clean
 * checkpoint and no `catalogue.dirty` defer every undamaged execution to its first use. `dirtyMarker`: whether
 * `catalogue.dirty` exists, when the caller read the directory under the writer lock already (else it is looked up).
 */
export async function recoverExecutions(
  directory: FsDirectory,
  trust = false,
  dirtyMarker?: boolean,
): Promise<OpenedCatalogue> {
  await directory.ensureDir(executionsDir(directory.dir));
  const [checkpoint, dirty, listed] = await Promise.all([
    loadCheckpoint(directory.dir),
    dirtyMarker ?? pathExists(dirtyMarkerPath(directory.dir)),
    // Read-only over a directory no app has opened yet: nothing to list (a writer created the folder just above).
    directory.readOnly ? (listing(executionsDir(directory.dir)) ?? []) : readdirSync(executionsDir(directory.dir)),
  ]);
  const names = listed.filter((n) => /^[xh][0-9a-f]*$/.test(n));
  if (trust && checkpoint.clean && !dirty) {
    // The folders still say which executions exist: one the checkpoint does not know (copied in while
    // closed), an entry whose folder is gone, and a damaged one are recovered now, as a full open would.
    // The checkpoint's own map is handed on (10,000 entries in bench row 11: no copy, no object per execution).
    const deferred = checkpoint.entries;
    const now: [string, CheckpointEntry | undefined][] = [];
    let known = 0;
    for (const name of names) {
      if (deferred.has(name)) known++;
      else now.push([name, undefined]);
    }
    if (known < deferred.size) {
      const folders = new Set(names);
      for (const [name, entry] of deferred) if (!folders.has(name)) now.push([name, entry]);
    }
    for (const [name, entry] of deferred) if (entry.damaged) now.push([name, entry]);
    const executions: RecoveredExecution[] = [];
    for (const [name, entry] of now) {
      deferred.delete(name);
      const recovered = await recoverExecution(directory, name, entry);
      if (recovered) executions.push(recovered);
    }
    return { executions, deferred, current: now.length === 0, clean: true, dirtyMarker: dirty };
  }
  const recovered: RecoveredExecution[] = [];
  for (let i = 0; i < names.length; i += 32) {
    const batch = await Promise.all(
      names.slice(i, i + 32).map((n) => recoverExecution(directory, n, checkpoint.entries.get(n), checkpoint.damaged)),
    );
    for (const execution of batch) if (execution) recovered.push(execution);
  }
  const current =
    checkpoint.exists &&
    !checkpoint.damaged &&
    recovered.length === checkpoint.entries.size &&
    recovered.every((r) => r.asCheckpointed === true);
  return { executions: recovered, deferred: new Map(), current, clean: checkpoint.clean, dirtyMarker: dirty };
}
