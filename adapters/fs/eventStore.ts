// The EventStore on node:fs: one append-only log file per execution, group-committed fsyncs.
import { mkdir, open, rm, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { appendToCatalogue } from "../../stores/catalogue.js";
import { checkAppendIds, checkStoredId } from "../../stores/ids.js";
import { JournalCorruptionError } from "../../stores/errors.js";
import { settle, unsettle } from "../../stores/settled.js";
import {
  EVENT_STORE_SPI_VERSION,
  type ArchiveSegment,
  type EventStore,
  type ExecutionInfo,
  type StoredRecord,
  type StoredSnapshot,
} from "../../stores/types.js";
import { entryName, hasCode, KeyedMutex, type FsDirectory } from "./directory.js";
import { GroupCommit, LogAppender, type SyncTarget } from "./groupCommit.js";
import { encodeJsonFrame } from "./framing.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./fsOps.js";
import {
  encodeHeader,
  encodeSnapshot,
  executionsDir,
  ExecutionPaths,
  listSegments,
  newFileId,
} from "./journalFiles.js";
import { parseLog, planArchive, readRange, readSegment, readSnapshot, readSnapshotFile } from "./journalFiles.js";
import { BatchMarks, readFromMark, type LogMark } from "./tailIndex.js";
import {
  behindSnapshotReason,
  behindSnapshotRemedy,
  damageOf,
  dirtyMarkerPath,
  recoverExecution,
  recoverExecutions,
  saveCheckpoint,
  survey,
  type CheckpointEntry,
  type RecoveredExecution,
} from "./recovery.js";

interface LogState {
  /** Bytes of the log covered by this state. */
  size: number;
  info?: ExecutionInfo;
  /** Counts appends, so a later round's state never loses to an earlier one. */
  index: number;
}

interface Execution {
  readonly id: string;
  readonly paths: ExecutionPaths;
  fileId: string;
  /** The log open for appending; opened on the first append after open or after a rewrite. */
  appender?: LogAppender;
  /** What is written (the fence checks against it); `durable` is what is fsync'd and visible. */
  written: LogState;
  durable: LogState;
  lastCommit: Promise<void>;
  /** The snapshot files being written, chained in seq order; settles (never rejects) once the last one has landed. */
  snapshotWrites: Promise<void>;
  headerArchivedThrough: number;
  /** Effective archived seq: the header's or the newest segment's (after a crash mid-archive); lazy. */
  archivedThrough?: number;
  snapshotSeq?: number;
  /** Batch starts of the current log file seen in this process: where a read from a seq starts. */
  marks: BatchMarks;
  /** The tail mark of the snapshot last read (a hint from disk, verified when used). */
  snapshotMark?: LogMark;
  /** Set once the journal was found damaged: every read and append is refused with it, every checkpoint keeps it. */
  corruption?: JournalCorruptionError;
}

const DONE = Promise.resolve();

// ExecutionInfo is flat but for `damaged` (flat too): a spread copies it, cheaper than structuredClone per entry.
const copyInfo = (info: ExecutionInfo): ExecutionInfo => ({
  ...info,
  ...(info.damaged ? { damaged: { ...info.damaged } } : {}),
});

/** The filesystem EventStore; open it with `fsStores`. */
export class FsEventStore implements EventStore {
  readonly spiVersion = EVENT_STORE_SPI_VERSION;
  private readonly executions = new Map<string, Execution>();
  private readonly mutex = new KeyedMutex();
  private readonly commit: GroupCommit;
  private appendsSinceCheckpoint = 0;
  private checkpointing = false;
  /**
   * The entries of a trusted clean checkpoint, by execution file name, whose logs were not read yet: each is
   * recovered, and becomes an Execution, at its first use (ADR 0008). Listed from the entry until then.
   */
  private pending = new Map<string, CheckpointEntry>();
  /** The checkpoint on disk is a clean one that still says every entry (a close writes nothing). */
  private cleanOnDisk = false;
  /** Resolves once `catalogue.dirty` is durable: awaited by every write to the logs (ADR 0008). */
  private dirty: Promise<void> | undefined;

  private constructor(
    private readonly directory: FsDirectory,
    private readonly checkpointEvery: number,
    private readonly onClose: () => Promise<void>,
  ) {
    this.commit = new GroupCommit(directory);
  }

  /**
   * Recovers every execution of the directory; the caller holds the writer lock. `trust`: a clean checkpoint
   * may be trusted (no lock of a dead writer was taken over, no `verifyAtOpen`): its executions are then
   * recovered one by one at first use (ADR 0008). `dirty`: whether `catalogue.dirty` exists, when the caller
   * listed the directory under the lock already (fsStores); else it is looked up.
   */
  static async open(
    directory: FsDirectory,
    checkpointEvery: number,
    onClose: () => Promise<void>,
    trust = false,
    dirty?: boolean,
  ): Promise<FsEventStore> {
    const store = new FsEventStore(directory, checkpointEvery, onClose);
    const { executions, deferred, current, clean, dirtyMarker } = await recoverExecutions(directory, trust, dirty);
    for (const recovered of executions) store.adopt(recovered);
    store.pending = deferred;
    // A marker left by a writer that did not close cleanly stays until this one closes cleanly.
    if (dirtyMarker) store.dirty = DONE;
    // A checkpoint that already says what the open found is not written again (an fsync saved).
    if (!directory.readOnly && !current) await store.saveCheckpoint();
    store.cleanOnDisk = clean && current;
    return store;
  }

  /**
   * Before the first write to the logs of this open: `catalogue.dirty`, durable, so that a crash from here
   * on makes the next open recover every log instead of trusting the clean checkpoint.
   */
  private markDirty(): Promise<void> {
    this.cleanOnDisk = false;
    return (this.dirty ??= (async () => {
      await writeFile(dirtyMarkerPath(this.directory.dir), "", { mode: PRIVATE_FILE_MODE });
      await this.directory.ops.fsyncDir(this.directory.dir);
    })());
  }

  private adopt(r: RecoveredExecution): void {
    const state: LogState = { size: r.size, ...(r.info ? { info: r.info } : {}), index: 0 };
    this.executions.set(r.executionId, {
      id: r.executionId,
      paths: new ExecutionPaths(this.directory.dir, r.name),
      fileId: r.fileId,
      marks: new BatchMarks(r.fileId),
      written: state,
      durable: state,
      lastCommit: DONE,
      snapshotWrites: DONE,
      headerArchivedThrough: r.headerArchivedThrough,
      ...(r.corruption ? { corruption: r.corruption } : {}),
    });
  }

  /** The execution (recovered first when deferred); throws its corruption when damaged. Call it under the execution's mutex. */
  private async use(executionId: string): Promise<Execution | undefined> {
    const execution = await this.verified(executionId);
    if (execution?.corruption) throw execution.corruption;
    return execution;
  }

  /**
   * The execution; one the open deferred is first recovered as a full open would have (recovery.ts), so a log
   * that disagrees with the clean checkpoint (cut, damaged, rewritten, grown) is repaired or reported here.
   * Under the execution's mutex.
   */
  private async verified(executionId: string): Promise<Execution | undefined> {
    const entry = this.pendingEntry(executionId);
    if (entry) {
      const name = entryName(executionId);
      const recovered = await recoverExecution(this.directory, name, entry);
      if (!recovered?.asCheckpointed) this.cleanOnDisk = false;
      if (recovered) this.adopt(recovered);
      this.pending.delete(name);
    }
    return this.executions.get(executionId);
  }

  /** The deferred checkpoint entry of the execution, if the open deferred it and it was not used since. */
  private pendingEntry(executionId: string): CheckpointEntry | undefined {
    if (this.pending.size === 0 || this.executions.has(executionId)) return undefined;
    const entry = this.pending.get(entryName(executionId));
    return entry?.info.executionId === executionId ? entry : undefined;
  }

  async append(executionId: string, expectedSeq: number, records: StoredRecord[]): Promise<void> {
    checkAppendIds(executionId, records);
    await this.directory.write(async () => {
      await this.markDirty();
      const { durable } = await this.mutex.run(executionId, () => this.writeBatch(executionId, expectedSeq, records));
      await durable;
      // A running execution keeps its handle: no second trip through the mutex (where a snapshot may wait).
      if (this.executions.get(executionId)?.written.info?.status === "running") return;
      await this.mutex.run(executionId, () => this.releaseEnded(executionId));
    });
  }

  // An ended execution is rarely appended to again (erasure's control records): its log's handle is
  // closed once its last write is durable, so a long-lived process holds no file per finished run.
  // A later append reopens it.
  private async releaseEnded(executionId: string): Promise<void> {
    const execution = this.executions.get(executionId);
    const appender = execution?.appender;
    if (!execution || !appender || execution.written.info?.status === "running") return;
    if (execution.written.index !== execution.durable.index) return; // a later write is still on its way
    execution.appender = undefined;
    await appender.handle.close().catch(() => undefined);
  }

  // Runs under the execution's mutex: the fence and the order of writes stay exact, while the
  // write and the fsync are awaited outside it, so later appends join the same write and round.
  private async writeBatch(
    executionId: string,
    expectedSeq: number,
    records: StoredRecord[],
  ): Promise<{ durable: Promise<void> }> {
    this.directory.assertWritable();
    let execution = await this.use(executionId);
    const info = appendToCatalogue(executionId, execution?.written.info, expectedSeq, records);
    if (!info) return { durable: DONE };
    const batch = encodeJsonFrame(records, this.directory.compression);
    const targets: SyncTarget[] = [];
    let bytes = batch;
    if (!execution) {
      const paths = ExecutionPaths.of(this.directory.dir, executionId);
      await mkdir(paths.dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      const fileId = newFileId();
      const empty: LogState = { size: 0, index: 0 };
      execution = {
        id: executionId,
        paths,
        fileId,
        marks: new BatchMarks(fileId),
        written: empty,
        durable: empty,
        lastCommit: DONE,
        snapshotWrites: DONE,
        headerArchivedThrough: 0,
        archivedThrough: 0,
      };
      execution.appender = new LogAppender(
        this.directory,
        await open(paths.log, "wx", PRIVATE_FILE_MODE),
        paths.log,
        0,
      );
      this.executions.set(executionId, execution);
      bytes = Buffer.concat([encodeHeader(executionId, 0, null, fileId), batch]);
      targets.push({ dir: paths.dir }, { dir: executionsDir(this.directory.dir) });
    }
    const { log } = execution.paths;
    const appender = (execution.appender ??= new LogAppender(
      this.directory,
      await open(log, "r+"),
      log,
      execution.written.size,
    ));
    const written: LogState = { size: execution.written.size + bytes.length, info, index: execution.written.index + 1 };
    execution.marks.add(records[0]!.seq, written.size - batch.length);
    execution.written = written;
    const target = execution;
    const durable = appender
      .write(bytes)
      .then(() => this.commit.sync([{ handle: appender.handle, path: log }, ...targets]))
      .then(() => {
        if (written.index > target.durable.index) target.durable = written;
        this.noteAppend();
      });
    execution.lastCommit = durable.catch(() => undefined);
    return { durable };
  }

  async read(executionId: string, fromSeq = 1): Promise<StoredRecord[]> {
    checkStoredId(executionId, "execution id");
    return this.directory.read(() =>
      this.mutex.run(executionId, async () => {
        const execution = await this.use(executionId);
        if (!execution?.durable.info) return [];
        const floor = Math.max(fromSeq, (await this.archivedThrough(execution)) + 1);
        return (await this.readTail(execution, floor)).filter((r) => r.seq >= floor);
      }),
    );
  }

  async head(executionId: string): Promise<number> {
    checkStoredId(executionId, "execution id");
    return (await this.getExecution(executionId))?.head ?? 0;
  }

  async getExecution(executionId: string): Promise<ExecutionInfo | undefined> {
    checkStoredId(executionId, "execution id");
    this.directory.assertOpen();
    const execution = this.executions.get(executionId);
    if (execution) return this.infoOf(execution);
    const entry = this.pendingEntry(executionId);
    return entry && copyInfo(entry.info);
  }

  async listExecutions(): Promise<ExecutionInfo[]> {
    this.directory.assertOpen();
    const infos: ExecutionInfo[] = [];
    for (const execution of this.executions.values()) {
      const info = this.infoOf(execution);
      if (info) infos.push(info);
    }
    for (const entry of this.pending.values()) infos.push(copyInfo(entry.info));
    return infos.sort((a, b) => (a.executionId < b.executionId ? -1 : 1));
  }

  // The file is encoded under the execution's mutex (its seq checked, its tail mark taken), then written
  // outside it: appends go on while the snapshot lands (temp file, fsync, rename, directory fsync), so a
  // snapshot never holds up a write-ahead record. Snapshot files land one at a time, in seq order; the
  // returned promise still resolves only once this one is durable. What must not overlap a snapshot's
  // rename (deleteHistory, archive) waits for `snapshotWrites` under the mutex.
  async putSnapshot(executionId: string, snapshot: StoredSnapshot): Promise<void> {
    checkStoredId(executionId, "execution id");
    await this.directory.write(async () => {
      // The write is handed out in an object: an async task returning the promise itself would await it under the mutex.
      const { landed } = await this.mutex.run(executionId, async (): Promise<{ landed: Promise<void> }> => {
        await this.markDirty();
        const execution = await this.use(executionId);
        // A snapshot never gets ahead of the durable log it folds.
        await execution?.lastCommit;
        if (!execution?.durable.info)
          throw new RangeError(`Execution "${executionId}" has no log; a snapshot needs one.`);
        // A damaged snapshot is replaced by the next good one; the log it was folded from is intact.
        execution.snapshotSeq ??= await readSnapshot(execution.paths, executionId).then(
          (stored) => stored?.seq ?? -1,
          (error: unknown) => (error instanceof JournalCorruptionError ? -1 : Promise.reject(error)),
        );
        if (execution.snapshotSeq >= snapshot.seq) return { landed: DONE };
        const mark = execution.marks.forSnapshot(snapshot.seq, execution.durable.info.head, execution.durable.size);
        const bytes = encodeSnapshot(executionId, snapshot, mark, this.directory.compression);
        // Taken now, so a later, older snapshot is refused at once; a failed write fails the writer anyway.
        execution.snapshotSeq = snapshot.seq;
        const { snapshot: path } = execution.paths;
        const write = execution.snapshotWrites.then(() => {
          // A writer that failed meanwhile writes nothing more.
          if (this.directory.failure) throw this.directory.failure;
          return this.directory.writeFileAtomic(path, bytes);
        });
        execution.snapshotWrites = write.catch(() => undefined);
        return { landed: write };
      });
      await landed;
    });
  }

  /**
   * The snapshot. A damaged snapshot file rejects with `JournalCorruptionError` of kind "snapshot" (a
   * cache: the runtime replays the log instead); a snapshot ahead of the log marks the execution damaged
   * ("behind-snapshot": the log lost records the snapshot had seen).
   */
  async getSnapshot(executionId: string): Promise<StoredSnapshot | undefined> {
    checkStoredId(executionId, "execution id");
    return this.directory.read(async () => {
      // At an execution's first use (a resume after a clean close), the snapshot file is read while its log
      // is checked against the checkpoint: recovery never writes a snapshot, and its result is used only
      // once the check found the execution.
      const early = this.pendingEntry(executionId)
        ? settle(readSnapshotFile(ExecutionPaths.of(this.directory.dir, executionId), executionId))
        : undefined;
      const execution = await this.mutex.run(executionId, () => this.verified(executionId));
      if (!execution) return undefined;
      let snapshot: StoredSnapshot | undefined;
      try {
        const file = early ? unsettle(await early) : await readSnapshotFile(execution.paths, executionId);
        snapshot = file?.snapshot;
        execution.snapshotMark = file?.mark;
      } catch (error) {
        if (!(error instanceof JournalCorruptionError)) throw error;
        throw new JournalCorruptionError(error.file, error.offset, `the snapshot is damaged (${error.reason})`, {
          kind: "snapshot",
          remedy: "A snapshot is a cache: the runtime replays the log instead; the next snapshot replaces the file.",
        });
      }
      const head = execution.durable.info?.head ?? 0;
      if (snapshot && snapshot.seq > head && !execution.corruption) {
        const { survives } = await survey(execution.paths, executionId);
        execution.corruption = new JournalCorruptionError(
          execution.paths.log,
          execution.durable.size,
          behindSnapshotReason(head, snapshot.seq, execution.paths),
          {
            kind: "behind-snapshot",
            survives: { ...survives, logHead: head },
            remedy: behindSnapshotRemedy(execution.paths),
          },
        );
      }
      if (snapshot && snapshot.seq > head && execution.corruption) throw execution.corruption;
      return snapshot;
    });
  }

  async archive(executionId: string, throughSeq: number): Promise<void> {
    checkStoredId(executionId, "execution id");
    await this.directory.write(async () => {
      await this.mutex.run(executionId, async () => {
        await this.markDirty();
        const execution = await this.use(executionId);
        await execution?.lastCommit;
        await execution?.snapshotWrites;
        const info = execution?.durable.info;
        if (!execution || !info) throw new RangeError(`Execution "${executionId}" has no log to archive.`);
        const archived = await this.archivedThrough(execution);
        if (throughSeq > info.head || throughSeq <= archived) {
          throw new RangeError(
            `Execution "${executionId}": cannot archive through seq ${throughSeq}; archived through ${archived}, head ${info.head}.`,
          );
        }
        const plan = planArchive(
          executionId,
          await this.readLog(execution),
          archived,
          throughSeq,
          this.directory.compression,
        );
        // Step 1: the segment, durable. A crash after it leaves the old log, whose records the
        // segment now covers: reads skip them (`archivedThrough` looks at segments).
        await this.directory.writeFileAtomic(execution.paths.segment(archived + 1, throughSeq), plan.segment);
        // Step 2: the live log without the prefix, under a new fileId, replacing the old one whole.
        await execution.appender?.handle.close();
        delete execution.appender;
        await this.directory.writeFileAtomic(execution.paths.log, plan.log);
        const state: LogState = { size: plan.log.length, info, index: execution.written.index + 1 };
        Object.assign(execution, {
          fileId: plan.fileId,
          written: state,
          durable: state,
          headerArchivedThrough: throughSeq,
          archivedThrough: throughSeq,
        });
        execution.marks.reset(plan.fileId);
      });
    });
  }

  async readArchives(executionId: string): Promise<ArchiveSegment[]> {
    checkStoredId(executionId, "execution id");
    return this.directory.read(() =>
      this.mutex.run(executionId, async () => {
        const execution = await this.verified(executionId);
        if (!execution) return [];
        const segments: ArchiveSegment[] = [];
        for (const { path } of await listSegments(execution.paths)) segments.push(await readSegment(path, executionId));
        return segments;
      }),
    );
  }

  async deleteHistory(executionId: string): Promise<void> {
    checkStoredId(executionId, "execution id");
    await this.directory.write(async () => {
      await this.mutex.run(executionId, async () => {
        await this.markDirty();
        const execution = this.executions.get(executionId);
        await execution?.lastCommit;
        // A snapshot still on its way would be renamed into the directory this takes away.
        await execution?.snapshotWrites;
        await execution?.appender?.handle.close();
        const paths = execution?.paths ?? ExecutionPaths.of(this.directory.dir, executionId);
        // One rename takes the log, snapshot and segments away together; emptying the trash can
        // wait (a crash leaves it for the next open to remove).
        const trash = join(this.directory.trashDir, `${paths.name}-${newFileId()}`);
        try {
          await this.directory.ops.rename(paths.dir, trash);
        } catch (error) {
          if (!hasCode(error, "ENOENT")) throw error;
        }
        this.executions.delete(executionId);
        this.pending.delete(paths.name);
        await this.directory.ops.fsyncDir(executionsDir(this.directory.dir));
        await rm(trash, { recursive: true, force: true }).catch(() => undefined);
      });
    });
  }

  /** Closes the three fs stores sharing this directory and releases the writer lock. */
  async close(): Promise<void> {
    await this.onClose();
  }

  /** Called by the directory's close once no operation runs: checkpoint, then release handles. */
  async shutdown(): Promise<void> {
    if (!this.directory.failure && !this.directory.readOnly) await this.closeCleanly().catch(() => undefined);
    for (const execution of this.executions.values()) await execution.appender?.handle.close().catch(() => undefined);
  }

  // The clean close of ADR 0008: the clean checkpoint, durable, then the dirty marker removed. An open
  // that wrote nothing over a clean checkpoint writes nothing.
  private async closeCleanly(): Promise<void> {
    if (!this.cleanOnDisk) {
      // An execution the catalogue cannot name (no record readable) has no entry: the checkpoint is then not complete.
      const complete = [...this.executions.values()].every((e) => e.durable.info !== undefined);
      await this.saveCheckpoint(complete);
      if (!complete) return;
    }
    if (this.dirty === undefined) return;
    await unlink(dirtyMarkerPath(this.directory.dir)).catch((error: unknown) =>
      hasCode(error, "ENOENT") ? undefined : Promise.reject(error),
    );
    await this.directory.ops.fsyncDir(this.directory.dir);
  }

  /** The catalogue entry as callers get it: a copy, with the damage when the journal is damaged. */
  private infoOf(execution: Execution): ExecutionInfo | undefined {
    const info = execution.durable.info;
    if (!info) return undefined;
    const copy = copyInfo(info);
    return execution.corruption ? { ...copy, damaged: damageOf(execution.corruption) } : copy;
  }

  private async readLog(execution: Execution): Promise<ReturnType<typeof parseLog>> {
    try {
      return parseLog(
        await readRange(execution.paths.log, 0, execution.durable.size),
        execution.paths.log,
        execution.paths.name,
      );
    } catch (error) {
      if (error instanceof JournalCorruptionError) execution.corruption = error;
      throw error;
    }
  }

  /**
   * The records of the durable log from the batch holding `fromSeq` on (some before it may come too):
   * read from a mark when one is known and holds (tailIndex.ts), else the whole log parsed, its marks kept.
   */
  private async readTail(execution: Execution, fromSeq: number): Promise<StoredRecord[]> {
    const { size, info } = execution.durable;
    const head = info?.head ?? 0;
    const fromSnapshot =
      execution.snapshotMark?.fileId === execution.fileId && execution.snapshotMark.seq <= fromSeq
        ? execution.snapshotMark
        : undefined;
    const mark = execution.marks.find(fromSeq, size) ?? fromSnapshot;
    if (mark) {
      const tail = await readFromMark(execution.paths.log, mark, size, head);
      if (tail) {
        execution.marks.merge(tail.batches);
        return tail.records;
      }
    }
    const log = await this.readLog(execution);
    execution.marks.merge(
      log.batches.slice(-BatchMarks.LIMIT).map((b) => ({ seq: b.records[0]!.seq, offset: b.offset })),
    );
    return log.batches.flatMap((b) => b.records);
  }

  private async archivedThrough(execution: Execution): Promise<number> {
    execution.archivedThrough ??= Math.max(
      execution.headerArchivedThrough,
      ...(await listSegments(execution.paths)).map((s) => s.toSeq),
    );
    return execution.archivedThrough;
  }

  private noteAppend(): void {
    if (++this.appendsSinceCheckpoint < this.checkpointEvery || this.checkpointing || this.directory.isClosed) return;
    this.checkpointing = true;
    this.directory
      .write(() => this.saveCheckpoint())
      .catch(() => undefined)
      .finally(() => (this.checkpointing = false));
  }

  private async saveCheckpoint(clean = false): Promise<void> {
    this.appendsSinceCheckpoint = 0;
    const entries: [string, CheckpointEntry][] = [];
    // A damaged execution keeps its entry, its durable size and its damage: a later open reports it again.
    for (const e of this.executions.values()) {
      if (!e.durable.info) continue;
      const entry: CheckpointEntry = {
        fileId: e.fileId,
        size: e.durable.size,
        info: e.durable.info,
        ...(e.headerArchivedThrough > 0 ? { archivedThrough: e.headerArchivedThrough } : {}),
      };
      entries.push([e.paths.name, { ...entry, ...(e.corruption ? { damaged: damageOf(e.corruption) } : {}) }]);
    }
    // A deferred execution keeps the entry the clean checkpoint had: nothing changed its log.
    for (const pair of this.pending) entries.push(pair);
    // A clean checkpoint in execution id order: the next open adopts its entries in that order, so its
    // listExecutions sorts a list that is already sorted (one pass).
    if (clean) entries.sort((a, b) => (a[1].info.executionId < b[1].info.executionId ? -1 : 1));
    await saveCheckpoint(this.directory, entries, clean);
  }
}
