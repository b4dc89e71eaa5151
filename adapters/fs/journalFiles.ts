// The files of one execution and how they are encoded and parsed.
//
// executions/<name>/log                      header frame, then one frame per append (a JSON array of records)
// executions/<name>/snapshot                 one frame { executionId, seq, at, state, log? } (log: where the tail starts, tailIndex.ts)
// executions/<name>/seg-<from>-<to>          one frame { executionId, fromSeq, toSeq, records } (16-digit seqs)
//
// One frame per append makes an append atomic on disk too: a torn write loses the whole append.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { foldCatalogue } from "../../stores/catalogue.js";
import type { Compression } from "../../stores/compression.js";
import { JournalCorruptionError } from "../../stores/errors.js";
import type { ArchiveSegment, ExecutionInfo, StoredRecord, StoredSnapshot } from "../../stores/types.js";
import { entryName, hasCode } from "./directory.js";
import { encodeJsonFrame, FRAME_HEADER_BYTES, scanFrames, type Frame } from "./framing.js";

export const JOURNAL_FORMAT = "loomwork-journal";
export const JOURNAL_VERSION = 1;

/** The first frame of every live log. */
export interface LogHeader {
  format: typeof JOURNAL_FORMAT;
  version: number;
  executionId: string;
  /** Random, new for every file written: tells a rewritten log from the one a checkpoint saw. */
  fileId: string;
  /** Records up to this seq were moved to segments when the file was written. */
  archivedThrough: number;
  /** The catalogue entry folded through `archivedThrough`; null when nothing was archived. */
  base: ExecutionInfo | null;
}

export function executionsDir(root: string): string {
  return join(root, "executions");
}

export class ExecutionPaths {
  readonly dir: string;
  readonly log: string;
  readonly snapshot: string;

  constructor(
    root: string,
    readonly name: string,
  ) {
    this.dir = join(executionsDir(root), name);
    this.log = join(this.dir, "log");
    this.snapshot = join(this.dir, "snapshot");
  }

  static of(root: string, executionId: string): ExecutionPaths {
    return new ExecutionPaths(root, entryName(executionId));
  }

  segment(fromSeq: number, toSeq: number): string {
    return join(this.dir, `seg-${String(fromSeq).padStart(16, "0")}-${String(toSeq).padStart(16, "0")}`);
  }
}

export const newFileId = (): string => randomBytes(8).toString("hex");

export function encodeHeader(
  executionId: string,
  archivedThrough: number,
  base: ExecutionInfo | null,
  fileId = newFileId(),
): Buffer {
  const header: LogHeader = {
    format: JOURNAL_FORMAT,
    version: JOURNAL_VERSION,
    executionId,
    fileId,
    archivedThrough,
    base,
  };
  return encodeJsonFrame(header);
}

/** Why `value` is not the header a log named `name` must start with, or undefined when it is. */
export function headerProblem(value: unknown, name: string): string | undefined {
  const header = value as Partial<LogHeader> | null;
  if (typeof header !== "object" || header === null || header.format !== JOURNAL_FORMAT)
    return "the first frame is not a journal header";
  if (header.version !== JOURNAL_VERSION)
    return `journal format version ${String(header.version)} is not supported (this build reads ${JOURNAL_VERSION})`;
  if (
    typeof header.executionId !== "string" ||
    typeof header.fileId !== "string" ||
    typeof header.archivedThrough !== "number"
  ) {
    return "the journal header is incomplete";
  }
  if (entryName(header.executionId) !== name)
    return `the header names execution ${JSON.stringify(header.executionId)}, which is not stored under ${name}`;
  return undefined;
}

/** The records of a batch frame that continues the log at `head`, or the reason it does not. */
export function batchRecords(frame: Frame, head: number): StoredRecord[] | string {
  const records = frame.value;
  if (!Array.isArray(records) || records.length === 0) return "the frame is not a batch of records";
  for (let i = 0; i < records.length; i++) {
    const seq = (records[i] as StoredRecord | null)?.seq;
    if (seq !== head + 1 + i) return `record seq ${String(seq)} does not follow seq ${head + i}`;
  }
  return records as StoredRecord[];
}

export interface ParsedLog {
  header: LogHeader;
  /** The batches after the header, with their file offsets. */
  batches: { offset: number; records: StoredRecord[] }[];
}

/** Parses a whole, recovered log; any bad frame is corruption here (tails were repaired at open). */
export function parseLog(bytes: Uint8Array, path: string, name: string): ParsedLog {
  const scan = scanFrames(bytes);
  if (scan.bad) throw new JournalCorruptionError(path, scan.bad.offset, scan.bad.reason);
  const [first, ...rest] = scan.frames;
  const problem = first ? headerProblem(first.value, name) : "the file has no header";
  if (problem) throw new JournalCorruptionError(path, 0, problem);
  const header = first!.value as LogHeader;
  let head = header.archivedThrough;
  const batches: ParsedLog["batches"] = [];
  for (const frame of rest) {
    const records = batchRecords(frame, head);
    if (typeof records === "string") throw new JournalCorruptionError(path, frame.offset, records);
    head += records.length;
    batches.push({ offset: frame.offset, records });
  }
  return { header, batches };
}

/**
 * The two files of `archive(throughSeq)` from a parsed log: the segment of the records after
 * `archived`, and the live log that keeps only the records after `throughSeq`, its header carrying
 * the catalogue entry folded through `throughSeq` (seq 1 and its subject leave with the segment).
 */
export function planArchive(
  executionId: string,
  log: ParsedLog,
  archived: number,
  throughSeq: number,
  compression: Compression = "none",
): { segment: Buffer; log: Buffer; fileId: string } {
  const records = log.batches.flatMap((b) => b.records);
  const moved = records.filter((r) => r.seq > archived && r.seq <= throughSeq);
  const segment = encodeJsonFrame(
    { executionId, fromSeq: archived + 1, toSeq: throughSeq, records: moved },
    compression,
  );
  const base = foldCatalogue(
    executionId,
    log.header.base ?? undefined,
    records.filter((r) => r.seq <= throughSeq),
  );
  const fileId = newFileId();
  const kept = log.batches.map((b) => b.records.filter((r) => r.seq > throughSeq)).filter((b) => b.length > 0);
  return {
    segment,
    log: Buffer.concat([
      encodeHeader(executionId, throughSeq, base, fileId),
      ...kept.map((batch) => encodeJsonFrame(batch, compression)),
    ]),
    fileId,
  };
}

/** Bytes [start, end) of a file. */
export async function readRange(path: string, start: number, end: number): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    const bytes = Buffer.alloc(end - start);
    let done = 0;
    while (done < bytes.length) {
      const { bytesRead } = await handle.read(bytes, done, bytes.length - done, start + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    return done === bytes.length ? bytes : bytes.subarray(0, done);
  } finally {
    await handle.close();
  }
}

const SEGMENT_NAME = /^seg-(\d{16})-(\d{16})$/;

/** The archive segments of an execution, in seq order (names sort by seq: zero-padded). */
export async function listSegments(paths: ExecutionPaths): Promise<{ path: string; fromSeq: number; toSeq: number }[]> {
  let names: string[];
  try {
    names = await readdir(paths.dir);
  } catch (error) {
    if (hasCode(error, "ENOENT")) return [];
    throw error;
  }
  return names
    .filter((n) => SEGMENT_NAME.test(n))
    .sort()
    .map((n) => {
      const [, from, to] = SEGMENT_NAME.exec(n)!;
      return { path: join(paths.dir, n), fromSeq: Number(from), toSeq: Number(to) };
    });
}

/** Reads a single-frame file (segment, snapshot, key, checkpoint); undefined when it does not exist. */
export async function readSingleFrame(path: string): Promise<unknown> {
  let bytes: Buffer;
  try {
    const handle = await open(path, "r");
    try {
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (hasCode(error, "ENOENT")) return undefined;
    throw error;
  }
  return singleFrameOf(bytes, path);
}

/**
 * `readSingleFrame` by synchronous calls, for a small file read once at open (the catalogue checkpoint):
 * one system call each for open, read and close instead of three trips through libuv's thread pool.
 */
export function readSingleFrameSync(path: string): unknown {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    if (hasCode(error, "ENOENT")) return undefined;
    throw error;
  }
  return singleFrameOf(bytes, path);
}

function singleFrameOf(bytes: Uint8Array, path: string): unknown {
  const scan = scanFrames(bytes);
  const frame = scan.frames[0];
  if (scan.bad || scan.frames.length !== 1 || !frame) {
    throw new JournalCorruptionError(
      path,
      scan.bad?.offset ?? scan.end,
      scan.bad?.reason ?? "expected exactly one frame",
    );
  }
  return frame.value;
}

export async function readSegment(path: string, executionId: string): Promise<ArchiveSegment> {
  const value = (await readSingleFrame(path)) as (ArchiveSegment & { executionId: string }) | undefined;
  if (!value || value.executionId !== executionId || !Array.isArray(value.records)) {
    throw new JournalCorruptionError(path, 0, "not an archive segment of this execution");
  }
  return { fromSeq: value.fromSeq, toSeq: value.toSeq, records: value.records };
}

/** Where a log's tail starts (tailIndex.ts): the batch frame whose first record is `seq` starts at `offset` of file `fileId`. */
export interface LogMark {
  fileId: string;
  /** Seq of the first record of the batch at `offset`; head + 1 for the end of the log. */
  seq: number;
  offset: number;
}

/** A mark read from a file: undefined when the value is not one. */
export function asLogMark(value: unknown): LogMark | undefined {
  const mark = value as Partial<LogMark> | null | undefined;
  if (typeof mark !== "object" || mark === null) return undefined;
  const { fileId, seq, offset } = mark;
  if (
    typeof fileId !== "string" ||
    !Number.isSafeInteger(seq) ||
    !Number.isSafeInteger(offset) ||
    seq! < 1 ||
    offset! < FRAME_HEADER_BYTES
  )
    return undefined;
  return { fileId, seq: seq!, offset: offset! };
}

/** A snapshot file; `log` (optional, ignored by versions that predate it) marks where the tail after it starts. */
export function encodeSnapshot(
  executionId: string,
  snapshot: StoredSnapshot,
  log?: LogMark,
  compression: Compression = "none",
): Buffer {
  return encodeJsonFrame(
    { executionId, seq: snapshot.seq, at: snapshot.at, state: snapshot.state, ...(log ? { log } : {}) },
    compression,
  );
}

/** The snapshot and, when the file has a well-formed one, its tail mark (a hint: tailIndex.ts verifies it). */
export async function readSnapshotFile(
  paths: ExecutionPaths,
  executionId: string,
): Promise<{ snapshot: StoredSnapshot; mark?: LogMark } | undefined> {
  const value = (await readSingleFrame(paths.snapshot)) as
    (StoredSnapshot & { executionId: string; log?: unknown }) | undefined;
  if (!value) return undefined;
  if (value.executionId !== executionId)
    throw new JournalCorruptionError(paths.snapshot, 0, "not a snapshot of this execution");
  const mark = asLogMark(value.log);
  return { snapshot: { seq: value.seq, at: value.at, state: value.state }, ...(mark ? { mark } : {}) };
}

export async function readSnapshot(paths: ExecutionPaths, executionId: string): Promise<StoredSnapshot | undefined> {
  return (await readSnapshotFile(paths, executionId))?.snapshot;
}
