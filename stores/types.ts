// The storage SPIs. Adapters (memory, IndexedDB, filesystem) implement these ports and nothing else.
// Every promise that resolves means the write is durable for that adapter (see docs/storage.md).

/** Version of the EventStore SPI this file describes. */
export const EVENT_STORE_SPI_VERSION = "1.0.0";
/**
 * Version of the ContentStore SPI. 1.3.0 added `deleteIfUntouchedSince` and `touchClock`;
 * 1.5.0 added the optional `subject` on `put` / `get` (keyed, sealing stores).
 */
export const CONTENT_STORE_SPI_VERSION = "1.5.0";
/** Version of the KeyStore SPI. */
export const KEY_STORE_SPI_VERSION = "1.0.0";
/** Version of the ScheduleStore SPI (schedules: loomwork/schedules). */
export const SCHEDULE_STORE_SPI_VERSION = "1.0.0";

import type { JournalRecord, StoredRecord } from "./schema.js";

// The records: a discriminated union of typed records (`JournalRecord`), and the loose form the SPIs carry.
export type * from "./schema.js";

/** Where an execution stands: running, or ended as done, error or stopped. */
export type ExecutionStatus = "running" | "done" | "error" | "stopped";

/** What `listExecutions` reports of one execution; maintained by the store from the records it appends. */
export interface ExecutionInfo {
  executionId: string;
  subject?: string;
  logicId?: string;
  /**
   * The logic's definition hash, from EXECUTION_STARTED (or its last EXECUTION_MIGRATED). Absent in entries an older release folded:
   * the runtime then reads the record itself.
   */
  machineHash?: string;
  /** The logic's declared version it runs on (EXECUTION_STARTED's `version`, or its last migration's), when one is declared. */
  version?: string;
  status: ExecutionStatus;
  startedAt: number;
  /** Set once an `EXECUTION_ENDED` record is appended. */
  endedAt?: number;
  /** Seq of the last record appended (live or archived). */
  head: number;
  /** A child execution's parent (its EXECUTION_STARTED's `parent.executionId`, ADR 0012); absent for a root. */
  parentId?: string;
  /** A child execution's root, the execution its tree started from (EXECUTION_STARTED's `root`); absent for a root. */
  rootId?: string;
  /**
   * Set when the store found the execution's journal damaged (a bad frame, a missing or cut log, a log
   * behind its snapshot): reads and resumes are refused with `JournalCorruptionError` until the file is
   * restored (docs/storage.md, "Recovery"). `status` and `head` are then the last ones the store knew.
   */
  damaged?: ExecutionDamage;
}

/** The damage an `ExecutionInfo` reports: the facts of the `JournalCorruptionError` its reads fail with. */
export interface ExecutionDamage {
  /** `JournalCorruptionError.kind`: "frame", "missing", "cut" or "behind-snapshot". */
  kind: string;
  file: string;
  offset: number;
  /** The error's message: what is damaged, what survives, what to do. */
  message: string;
}

/** The folded state of an execution at `seq`: what a resume starts from. */
export interface StoredSnapshot {
  seq: number;
  at: number;
  /** JSON-serialisable runtime state (the XState persisted snapshot plus the runtime's pending steps and timers). */
  state: unknown;
}

/** Old records moved out of the live log. A segment pins every content address it cites. */
export interface ArchiveSegment {
  fromSeq: number;
  toSeq: number;
  records: StoredRecord[];
}

/**
 * The journal port.
 *
 * Invariants every adapter keeps (the conformance suite in spec/conformance checks them):
 * - `append` is atomic: all of `records` become visible, or none does.
 * - `append` rejects with `ConcurrencyError` unless the execution's head equals `expectedSeq`
 *   and the records' seqs are `expectedSeq + 1, expectedSeq + 2, ...`; the log never forks.
 * - The first record of an execution (seq 1) is `EXECUTION_STARTED`; the store takes `subject`,
 *   `logicId` and `at` from it for the catalogue, and `status` / `endedAt` from `EXECUTION_ENDED`.
 * - A record is returned by `read` exactly as appended (deep-equal JSON).
 */
export interface EventStore {
  readonly spiVersion: string;
  append(executionId: string, expectedSeq: number, records: StoredRecord[]): Promise<void>;
  /** The live records with `seq >= fromSeq` (default 1), in order. Archived records are not returned. */
  read(executionId: string, fromSeq?: number): Promise<StoredRecord[]>;
  /** Seq of the last record, 0 for an unknown execution. */
  head(executionId: string): Promise<number>;
  /** The catalogue entry, or undefined when the execution does not exist. */
  getExecution(executionId: string): Promise<ExecutionInfo | undefined>;
  /** Every execution, ordered by `executionId`. */
  listExecutions(): Promise<ExecutionInfo[]>;
  /**
   * Optional: the executions of the tree `executionId` is in (its root, and every execution whose `rootId` is that
   * root), in any order, from an index; without it a tree is read off `listExecutions()`. Unknown id: [].
   */
  listTree?(executionId: string): Promise<ExecutionInfo[]>;
  /** Replaces the execution's snapshot when `snapshot.seq` is newer than the stored one. */
  putSnapshot(executionId: string, snapshot: StoredSnapshot): Promise<void>;
  getSnapshot(executionId: string): Promise<StoredSnapshot | undefined>;
  /**
   * Moves the live records with `seq <= throughSeq` into a new archive segment, atomically.
   * Refuses (RangeError) a `throughSeq` beyond the head or at or below the last archived seq.
   */
  archive(executionId: string, throughSeq: number): Promise<void>;
  /** Archive segments in seq order. */
  readArchives(executionId: string): Promise<ArchiveSegment[]>;
  /** Retention: removes the execution's live log, archives, snapshot and catalogue entry. */
  deleteHistory(executionId: string): Promise<void>;
  /** Releases handles and locks. The store must not be used afterwards. */
  close?(): Promise<void>;
}

/** A content address: `sha256:<hex>` of the stored bytes (for a sealing store, of the per-subject ciphertext). */
export type ContentAddress = string;

/** One blob as `ContentStore.list` reports it. */
export interface ContentInfo {
  address: ContentAddress;
  size: number;
  /** The touch clock's value at the last put of this address. */
  touchedAt: number;
}

/** Options of `ContentStore.put` / `get`: the subject a sealing store keys the blob to. */
export interface ContentPutOptions {
  /** The subject whose data the bytes are; a sealing store keys the address and seals under this subject's key. */
  subject?: string;
}

/**
 * The content-addressed blob port.
 *
 * Invariants:
 * - `put` is idempotent: the same bytes (and subject, for keyed stores) give the same address,
 *   and a put of an existing address only touches it.
 * - `touchClock()` returns T such that any put that starts after it returned touches at >= T.
 * - `deleteIfUntouchedSince(a, T)` deletes `a` only if it was last touched before T, atomically
 *   with respect to a concurrent put of the same address.
 */
export interface ContentStore {
  readonly spiVersion: string;
  /** True when every blob is sealed under its subject's key (ADR 0140 D8). */
  readonly sealsContent: boolean;
  put(bytes: Uint8Array, options?: ContentPutOptions): Promise<ContentAddress>;
  /** The bytes, or undefined when the address is unknown (or was reclaimed). */
  get(address: ContentAddress, options?: ContentPutOptions): Promise<Uint8Array | undefined>;
  has(address: ContentAddress): Promise<boolean>;
  /** Unconditional delete; resolves true when something was deleted. */
  delete?(address: ContentAddress): Promise<boolean>;
  /** Conditional delete; resolves true when something was deleted. */
  deleteIfUntouchedSince?(address: ContentAddress, cutoff: number): Promise<boolean>;
  touchClock?(): Promise<number>;
  /** Every blob; streamed so a sweep over 100k blobs holds a page at a time. */
  list(): AsyncIterable<ContentInfo>;
  close?(): Promise<void>;
}

/**
 * Per-subject data keys. Destroying a subject's key is the shred (crypto-erasure): every record and
 * blob sealed under it becomes unreadable, and `getOrCreate` refuses to mint a new one for that subject.
 */
export interface KeyStore {
  readonly spiVersion: string;
  /** The subject's 32-byte key, created on first use. Rejects with `SubjectErasedError` once destroyed. */
  getOrCreate(subject: string): Promise<Uint8Array>;
  /** The subject's key, or undefined when none was created or it was destroyed. */
  get(subject: string): Promise<Uint8Array | undefined>;
  /** Destroys the key; idempotent. Afterwards `get` resolves undefined and `getOrCreate` rejects. */
  destroy(subject: string): Promise<void>;
  isDestroyed(subject: string): Promise<boolean>;
  close?(): Promise<void>;
}

/** A held writer lock on one execution; see `Stores.acquireWriter`. */
export interface WriterLease {
  release(): Promise<void>;
}

/**
 * The fleet port: what stores a fleet of workers shares offer (`postgresStores`; the workers are
 * loomwork/postgres `createWorker`). `app.submit` puts an execution on its queue, `app.result` of a submitted
 * execution waits on it for the end a worker journals.
 */
export interface FleetPort {
  /**
   * Puts the execution on the fleet's queue (before its start is journaled); idempotent (a second enqueue keeps the
   * first placement). `placement`: the queue whose limits it waits for (`app.submit`'s `queue`, `key`, `priority`).
   */
  enqueue(executionId: string, placement?: FleetPlacement): Promise<void>;
  /** True when the execution was submitted to the fleet. */
  isSubmitted(executionId: string): Promise<boolean>;
  /**
   * Resolves when the execution may have ended after the call (a notification, or the poll interval passed):
   * look again. Call it before looking, so that an end between the look and the wait is not missed.
   */
  waitForEnd(executionId: string): Promise<void>;
  /**
   * Optional (ADR 0012 D9): puts a message of a tree of executions in the execution's inbox, for the worker that
   * holds it: an event from another execution of the tree (journaled with its sender and message id, a duplicate
   * dropped), or a stop. No check of the event: it is the runtime's own. Nothing is queued for an id with no log.
   */
  message?(executionId: string, message: FleetMessage): Promise<void>;
}

/** Where a submitted execution waits for a slot: its queue (with the limits the submitting app declared), key and priority. */
export interface FleetPlacement {
  queue: string;
  key: string;
  /** Lower starts first. */
  priority: number;
  limits: { concurrency?: number; perKey?: number; rate?: { limit: number; periodMs: number } };
}

/** A message between executions of a tree on the fleet (FleetPort.message). */
export type FleetMessage =
  | { event: { type: string }; from: { executionId: string; messageId: string } }
  /** To the execution's live source (a callback or observable actor found through the tree's registry): live. */
  | { event: { type: string }; source: string }
  /** From a live custom action through a tree ref: journaled as an external event, with no sender id. */
  | { event: { type: string }; live: true }
  | { stop: string };

/** When a stored schedule fires: a cron expression (in `timezone`, UTC when absent) or a fixed period. */
export type ScheduleSpec = { cron: string; timezone?: string } | { every: number };

/**
 * A durable schedule as the stores keep it (loomwork/schedules `schedule(app, logic, options)`): its definition,
 * and where its ticks stand. Plain JSON. Times are milliseconds since the Unix epoch.
 */
export interface StoredSchedule {
  id: string;
  /** The logic each tick starts (its newest version the firing app or worker holds). */
  logicId: string;
  spec: ScheduleSpec;
  /** The input of every tick's execution (plain JSON). */
  input: unknown;
  overlap: "skip" | "allow";
  catchUp: "skip" | "latest" | "all";
  paused: boolean;
  createdAt: number;
  /** The next tick not yet decided; null when the cron expression has no further match. */
  nextAt: number | null;
  /** The last tick that started an execution, and that execution's id. */
  lastTick?: { at: number; executionId: string };
  /** Ticks skipped because the previous tick's execution was still running (`overlap: "skip"`), and the last one. */
  skipped: number;
  lastSkippedAt?: number;
  /** Ticks left unfired by the catch-up policy after a downtime (or a pause). */
  missed: number;
  /** Bumped by every write: the compare-and-set of `ScheduleStore.put`. */
  revision: number;
}

/**
 * The schedules port: a small keyed set of `StoredSchedule`s. Every write is a compare-and-set on `revision`, so
 * two apps or workers deciding the same tick write its outcome once (docs/scaling.md, "Schedules").
 */
export interface ScheduleStore {
  readonly spiVersion: string;
  get(id: string): Promise<StoredSchedule | undefined>;
  /** Every schedule, ordered by id. */
  list(): Promise<StoredSchedule[]>;
  /**
   * Writes `schedule` only when the stored one's revision is `expectedRevision` (0: none stored); the stored
   * revision becomes `expectedRevision + 1` whatever `schedule.revision` says. Resolves false, writing nothing, otherwise.
   */
  put(schedule: StoredSchedule, expectedRevision: number): Promise<boolean>;
  /** Removes the schedule; resolves true when one was there. */
  delete(id: string): Promise<boolean>;
}

/** The three stores an app runs on. Two apps over the same `Stores` see the same executions. */
export interface Stores {
  events: EventStore;
  content: ContentStore;
  keys: KeyStore;
  /**
   * Optional: takes the single-writer lock on an execution (IndexedDB: a Web Lock across tabs), failing fast
   * with WriterLockedError when another writer holds it. The app takes it on start and resume and releases it
   * when the execution ends or the app closes. The expected-seq fence stays the real guard.
   */
  acquireWriter?(executionId: string): Promise<WriterLease>;
  /** Optional: the queue a fleet of workers shares (`postgresStores`); `app.submit` needs it, `app.start` does not. */
  fleet?: FleetPort;
  /** Optional: the durable schedules (loomwork/schedules needs it); every built-in adapter has one. */
  schedules?: ScheduleStore;
  /**
   * Optional: carries an execution's live stream between the processes on these stores (`postgresStores`), so
   * that `app.stream` in one process follows an execution a worker runs. Without it a stream is live only in the
   * process that runs the execution.
   */
  streams?: StreamFeed;
}

/** A child execution the execution started (a sub-agent), as its stream's followers learn of it. */
export interface StreamChild {
  executionId: string;
  parentId: string;
  parentStepId?: string;
  logicId?: string;
}

/** What a process running an execution publishes of it: a model delta, the log's new head, a child it started, or the end. Never journaled. */
export type PublishedStreamItem =
  | { kind: "delta"; stepId: string; delta: { type: string } }
  | { kind: "appended"; seq: number }
  | { kind: "child"; child: StreamChild }
  | { kind: "ended" };

/** What a follower of an execution run elsewhere receives, in order: a delta, a journaled record, a child it started, or the end. */
export type FollowedStreamItem =
  | { kind: "delta"; stepId: string; delta: { type: string } }
  | { kind: "record"; record: JournalRecord }
  | { kind: "child"; child: StreamChild }
  | { kind: "ended" };

/** What a stream feed hears of an app (its runtime bus): the appends, deltas and ends of what it runs. */
export interface StreamFeedBus {
  on(event: "append", listener: (event: { executionId: string; records: JournalRecord[] }) => void): () => void;
  on(
    event: "delta",
    listener: (event: { executionId: string; stepId: string; delta: { type: string } }) => void,
  ): () => void;
  on(event: "ended", listener: (event: { executionId: string }) => void): () => void;
}

/** A follow of one execution (`StreamFeed.follow`). */
export interface StreamFollow {
  /** Resolves once what the stores held of the stream when the follow began was handed over. */
  readonly ready: Promise<void>;
  /** Stops following: nothing more is handed over. */
  stop(): void;
}

/**
 * The live stream of executions between processes (ADR 0019): the process that runs an execution publishes its
 * deltas and appends; a process that does not follows them. Best effort: a lost item costs a follower live
 * deltas, never a journaled record (the journal is read again).
 */
export interface StreamFeed {
  /** Called by each app on these stores at its creation: what it runs is published from its bus. */
  attach(bus: StreamFeedBus): void;
  /** Publishes one item of an execution (a child a fleet submit started); returns at once. */
  publish(executionId: string, item: PublishedStreamItem): void;
  /**
   * Follows an execution run elsewhere: `push` gets what the stores hold of its stream, then what is published,
   * with each delta placed before the records appended after it (read with `readLog`), until its end.
   */
  follow(
    executionId: string,
    push: (item: FollowedStreamItem) => void,
    readLog: () => Promise<JournalRecord[]>,
  ): StreamFollow;
  /** Removes what is held of these executions' streams (their subject was erased). */
  forget?(executionIds: readonly string[]): Promise<void>;
}
