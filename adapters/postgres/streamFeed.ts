// The stream feed on PostgreSQL (ADR 0019): app.stream in one process follows an execution a worker runs. The
// worker's app publishes the execution's deltas, the heads of its appends and its end as rows of an UNLOGGED table,
// a batch per statement, and notifies the execution's own channel; a follower LISTENs to that channel and reads
// the rows after the last it read, so a follower that comes late (a reconnect, another web server) reads the same
// items in the same order. Nothing here is journaled: the rows go a while after the end, and after an hour at most.
import { createHash, randomUUID } from "node:crypto";
import { EXECUTION_ENDED, EXECUTION_STARTED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type {
  FollowedStreamItem,
  JournalRecord,
  PublishedStreamItem,
  StreamFeed,
  StreamFeedBus,
  StreamFollow,
} from "../../stores/types.js";
import type { PgDatabase } from "./database.js";

/** How long the stream items live (ADR 0019). */
export const STREAM_ITEMS = {
  /**
   * An execution's items are removed this long after the last one, when that was not a delta (its turn ended, or it
   * parked, or a tool runs): a follower that is behind, or a client reconnecting, reads them first.
   */
  keepMs: 30_000,
  /** Items older than this are removed whatever became of their execution (a worker that died left them). */
  maxAgeMs: 3_600_000,
  /** How often a publishing process removes the items older than maxAgeMs. */
  sweepMs: 60_000,
} as const;

// The polls a follower waits without a new item before it reads the log itself (a publisher that died or an item lost).
const QUIET_POLLS = 2;

/** The stream feed of one schema (`PostgresStores.streams`). */
export class PostgresStreamFeed implements StreamFeed {
  /** Names this process's items: a step streamed again by another process (a takeover) starts over for a follower. */
  readonly publisher = randomUUID();
  private queue: { executionId: string; item: PublishedStreamItem }[] = [];
  private flushing = false;
  // Executions that streamed a delta here: their appends and end are published too (a follower places the
  // records among the deltas by them); an execution that never streamed is followed by its log alone.
  private readonly streamed = new Set<string>();
  // Per streamed execution: the removal of its items once it was quiet for keepMs after a record or its end.
  private readonly quiet = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly followers = new Set<Follower>();
  private lastSweep = Date.now();
  private closed = false;

  constructor(
    readonly db: PgDatabase,
    readonly pollMs: number,
    private readonly keepMs: number = STREAM_ITEMS.keepMs,
  ) {}

  /** The channel an execution's items are notified on: its own, so only its followers hear of them. */
  channelOf(executionId: string): string {
    return `loomwork_s_${createHash("md5").update(`${this.db.schema}:${executionId}`).digest("hex")}`;
  }

  attach(bus: StreamFeedBus): void {
    bus.on("delta", ({ executionId, stepId, delta }) => this.publish(executionId, { kind: "delta", stepId, delta }));
    bus.on("append", ({ executionId, records }) => {
      const start = records[0];
      // A child started here (a sub-agent): its parent's followers join it to the tree they stream.
      if (start?.type === EXECUTION_STARTED && start.parent) {
        const { executionId: parentId, stepId: parentStepId } = start.parent;
        const child = { executionId, parentId, parentStepId, logicId: start.logicId };
        this.publish(parentId, { kind: "child", child });
      }
      this.publish(executionId, { kind: "appended", seq: records.at(-1)?.seq ?? 0 });
    });
    bus.on("ended", ({ executionId }) => this.publish(executionId, { kind: "ended" }));
  }

  publish(executionId: string, item: PublishedStreamItem): void {
    if (this.closed) return;
    if (item.kind === "delta") this.streamed.add(executionId);
    else if (!this.streamed.has(executionId) && item.kind !== "child") return;
    // A step streams: nothing of its execution is removed until a record follows its deltas (its step ended).
    if (item.kind !== "child") {
      clearTimeout(this.quiet.get(executionId));
      if (item.kind === "delta") this.quiet.delete(executionId);
      else this.afterQuiet(executionId);
    }
    this.queue.push({ executionId, item });
    if (!this.flushing) void this.flush();
  }

  follow(
    executionId: string,
    push: (item: FollowedStreamItem) => void,
    readLog: () => Promise<JournalRecord[]>,
  ): StreamFollow {
    const follower = new Follower(this, executionId, push, readLog, () => this.followers.delete(follower));
    this.followers.add(follower);
    return follower;
  }

  forget(executionIds: readonly string[]): Promise<void> {
    for (const executionId of executionIds) {
      this.streamed.delete(executionId);
      clearTimeout(this.quiet.get(executionId));
      this.quiet.delete(executionId);
    }
    return this.remove(executionIds);
  }

  /** Stops following and publishing; what was published stays until its removal by another process's sweep. */
  close(): void {
    this.closed = true;
    for (const timer of this.quiet.values()) clearTimeout(timer);
    this.quiet.clear();
    for (const follower of [...this.followers]) follower.stop();
  }

  // One statement per batch, whatever was published while the last one ran: the rows in order, and one
  // notification per execution on its channel (delivered at the commit, after the rows are visible).
  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const batch = this.queue.splice(0);
        await this.db
          .query(
            `WITH ins AS (
               INSERT INTO ${this.db.s}.stream_items (execution_id, publisher, item)
               SELECT e, $3, i FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(e, i, o) ORDER BY o
               RETURNING execution_id)
             SELECT pg_notify('loomwork_s_' || md5($4 || ':' || e), '') FROM (SELECT DISTINCT execution_id AS e FROM ins) d`,
            [batch.map((b) => b.executionId), batch.map((b) => JSON.stringify(b.item)), this.publisher, this.db.schema],
            "stream_publish",
          )
          // Best effort: a lost batch costs followers live deltas, never a record (they read the log at a quiet poll).
          .catch(() => undefined);
      }
      if (Date.now() - this.lastSweep >= STREAM_ITEMS.sweepMs && !this.closed) {
        this.lastSweep = Date.now();
        await this.db
          .query(`DELETE FROM ${this.db.s}.stream_items WHERE at < clock_timestamp() - make_interval(secs => $1)`, [
            STREAM_ITEMS.maxAgeMs / 1000,
          ])
          .catch(() => undefined);
      }
    } finally {
      this.flushing = false;
    }
  }

  private remove(executionIds: readonly string[]): Promise<void> {
    return this.db
      .query(`DELETE FROM ${this.db.s}.stream_items WHERE execution_id = ANY($1::text[])`, [executionIds])
      .then(() => undefined);
  }

  // The turn's items go once the execution was quiet for keepMs; it is no longer one that streamed here (a later
  // turn streams again from its first delta).
  private afterQuiet(executionId: string): void {
    const timer = setTimeout(() => {
      this.quiet.delete(executionId);
      this.streamed.delete(executionId);
      this.remove([executionId]).catch(() => undefined);
    }, this.keepMs);
    timer.unref?.();
    this.quiet.set(executionId, timer);
  }
}

// One execution followed: the items after the last read, handed over in order, each `appended` as the records up
// to its head (read from the log), until the end. LISTEN wakes it; a poll every pollMs is the floor.
class Follower implements StreamFollow {
  readonly ready: Promise<void>;
  private lastId = "0";
  private lastSeq = 0;
  private sawItems = false;
  private quiet = 0;
  // The log's head at the last quiet poll: records handed at a quiet poll only once it stayed there.
  private quietHead = -1;
  private sawEnd = false;
  private log: JournalRecord[] | undefined;
  // The process that streamed each step: a step streamed again by another (a takeover) restarts with a `retry`.
  private readonly publisherOf = new Map<string, string>();
  // Steps whose outcome was handed over: a delta of theirs that comes late is dropped (the journal's reply stands).
  private readonly recorded = new Set<string>();
  private running: Promise<void> | undefined;
  private wanted = false;
  private polled = false;
  private stopped = false;
  private unlisten: (() => void) | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly feed: PostgresStreamFeed,
    private readonly executionId: string,
    private readonly push: (item: FollowedStreamItem) => void,
    private readonly readLog: () => Promise<JournalRecord[]>,
    private readonly onStop: () => void,
  ) {
    this.ready = this.start();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.unlisten?.();
    this.onStop();
  }

  private async start(): Promise<void> {
    // Without LISTEN (the server is away) the poll still follows.
    this.unlisten = await this.feed.db
      .listenTo(this.feed.channelOf(this.executionId), () => void this.pull())
      .catch(() => undefined);
    if (this.stopped) return this.unlisten?.();
    this.timer = setInterval(() => void this.pull(true), this.feed.pollMs);
    this.timer.unref?.();
    await this.pull();
  }

  // One read at a time; a wake while one runs makes another after it.
  private pull(polled = false): Promise<void> {
    this.wanted = true;
    if (polled) this.polled = true;
    return (this.running ??= this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (this.wanted && !this.stopped) {
        this.wanted = false;
        const polled = this.polled;
        this.polled = false;
        await this.read(polled).catch(() => undefined); // the next poll reads again
      }
    } finally {
      this.running = undefined;
    }
  }

  private async read(polled: boolean): Promise<void> {
    // The id as text (a bigint), ordered as the number it is.
    const { rows } = await this.feed.db.query<{ key: string; publisher: string; item: string }>(
      `SELECT id::text AS key, publisher, item FROM ${this.feed.db.s}.stream_items
       WHERE execution_id = $1 AND id > $2::bigint ORDER BY id`,
      [this.executionId, this.lastId],
      "stream_follow",
    );
    for (const row of rows) {
      if (this.stopped) return;
      this.lastId = row.key;
      this.sawItems = true;
      this.quiet = 0;
      const item = JSON.parse(row.item) as PublishedStreamItem;
      if (item.kind === "delta") this.delta(item.stepId, item.delta, row.publisher);
      else if (item.kind === "appended") await this.records(item.seq);
      else if (item.kind === "child") this.push(item);
      else return this.end();
    }
    if (polled && rows.length === 0) await this.settle();
  }

  private delta(stepId: string, delta: { type: string }, publisher: string): void {
    if (this.recorded.has(stepId)) return;
    const before = this.publisherOf.get(stepId);
    if (before !== undefined && before !== publisher) this.push({ kind: "delta", stepId, delta: { type: "retry" } });
    this.publisherOf.set(stepId, publisher);
    this.push({ kind: "delta", stepId, delta });
  }

  // The records up to `seq` (all of them: Infinity), from the last log read when it reaches that far.
  private async records(seq: number): Promise<void> {
    if (seq <= this.lastSeq) return;
    if ((this.log?.at(-1)?.seq ?? 0) < seq) this.log = await this.readLog();
    for (const record of this.log ?? []) if (record.seq > this.lastSeq && record.seq <= seq) this.hand(record);
  }

  private hand(record: JournalRecord): void {
    this.lastSeq = record.seq;
    if (record.type === EXECUTION_ENDED) this.sawEnd = true;
    if (record.type === STEP_COMPLETED || record.type === STEP_FAILED) this.recorded.add(record.stepId);
    this.push({ kind: "record", record });
  }

  // Nothing came for a poll: an execution that never streamed is followed by its log; one that did, once its
  // publisher and its log were both quiet for QUIET_POLLS polls (it died, or an item was lost), so no record
  // overtakes a delta on its way (the worker that took over appended a step whose deltas are not read yet).
  private async settle(): Promise<void> {
    if (this.sawItems && ++this.quiet < QUIET_POLLS) return;
    const { rows } = await this.feed.db.query<{ head: number }>(
      `SELECT head FROM ${this.feed.db.s}.executions WHERE execution_id = $1`,
      [this.executionId],
      "stream_head",
    );
    const head = rows[0]?.head ?? 0;
    if (this.sawItems && head !== this.quietHead) {
      this.quietHead = head;
      this.quiet = 0;
      return;
    }
    await this.records(head);
    if (this.sawEnd) this.finish();
  }

  private async end(): Promise<void> {
    await this.records(Number.POSITIVE_INFINITY);
    this.finish();
  }

  private finish(): void {
    if (this.stopped) return;
    this.push({ kind: "ended" });
    this.stop();
  }
}
