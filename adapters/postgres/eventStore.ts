// The journal on PostgreSQL. An append is one statement (one round trip, one implicit transaction): the
// catalogue row moves only from the expected head, the records go in under the unique (execution_id, seq)
// key, a worker's lease is checked (FOR SHARE, so a takeover waits for it), an inbox message the append
// journals is consumed, and the end of an execution is notified, all or nothing.
import { assertContiguous, foldCatalogue } from "../../stores/catalogue.js";
import { checkAppendIds, checkStoredId } from "../../stores/ids.js";
import { ConcurrencyError } from "../../stores/errors.js";
import { EVENT_RECEIVED, EXECUTION_ENDED, EXECUTION_MIGRATED, EXECUTION_STARTED } from "../../stores/schema.js";
import {
  EVENT_STORE_SPI_VERSION,
  type ArchiveSegment,
  type EventStore,
  type ExecutionInfo,
  type ExecutionStatus,
  type StoredRecord,
  type StoredSnapshot,
} from "../../stores/types.js";
import { NOTIFY, UNIQUE_VIOLATION } from "./constants.js";
import type { PgDatabase } from "./database.js";
import { LeaseLostError } from "./errors.js";

/** The lease a worker appends under: its owner id and the epoch its claim got. */
export interface LeaseFence {
  owner: string;
  epoch: string;
}

/** What a worker adds to the appends of the executions it runs (createWorker). */
export interface AppendHooks {
  /**
   * The lease an append of this execution must hold, or undefined for an unfenced append. `expectedSeq` 0: the
   * execution's first append (its start, as a submit journals it), which its seq fence alone guards.
   */
  fence(executionId: string, expectedSeq: number): LeaseFence | undefined;
  /**
   * The inbox message whose event this append journals, consumed in the same statement; asked only of an
   * append with an EVENT_RECEIVED that is not a timer firing. Undefined unless the append is that very
   * event's (a timer's or another send's append must leave the message in the inbox).
   */
  inboxMessage(executionId: string): string | undefined;
  /** Called after an append that consumed `inboxId` committed. */
  consumed(executionId: string, inboxId: string): void;
}

interface ExecutionRow {
  execution_id: string;
  subject: string | null;
  logic_id: string | null;
  machine_hash: string | null;
  logic_version: string | null;
  parent_id: string | null;
  root_id: string | null;
  status: ExecutionStatus;
  started_at: number;
  ended_at: number | null;
  head: number;
}

const isUniqueViolation = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && error.code === UNIQUE_VIOLATION;

function infoOf(row: ExecutionRow): ExecutionInfo {
  const info: ExecutionInfo = {
    executionId: row.execution_id,
    status: row.status,
    startedAt: row.started_at,
    head: row.head,
  };
  if (row.subject !== null) info.subject = row.subject;
  if (row.logic_id !== null) info.logicId = row.logic_id;
  if (row.machine_hash !== null) info.machineHash = row.machine_hash;
  if (row.logic_version !== null) info.version = row.logic_version;
  if (row.ended_at !== null) info.endedAt = row.ended_at;
  if (row.parent_id !== null) info.parentId = row.parent_id;
  if (row.root_id !== null) info.rootId = row.root_id;
  return info;
}

/** The append's prepared-statement name (per schema: PgDatabase.query adds it); the hot reads have names of their own. */
const APPEND_STATEMENT = "lw_append";

const EXECUTION_COLUMNS =
  "execution_id, subject, logic_id, machine_hash, logic_version, parent_id, root_id, status, started_at, ended_at, head";

/** `EventStore` on PostgreSQL; see `postgresStores`. */
export class PostgresEventStore implements EventStore {
  readonly spiVersion = EVENT_STORE_SPI_VERSION;
  private readonly appendSql: string;

  constructor(
    readonly db: PgDatabase,
    private readonly hooks?: AppendHooks,
  ) {
    const s = db.s;
    this.appendSql = `
      WITH fence AS (
        SELECT 1 FROM ${s}.fleet
        WHERE execution_id = $1 AND owner = $12 AND epoch = $13::bigint AND lease_until > clock_timestamp()
        FOR SHARE
      ), cat AS (
        INSERT INTO ${s}.executions (execution_id, subject, logic_id, machine_hash, logic_version, parent_id, root_id, status, started_at, ended_at, head)
        SELECT $1, $5, $6, $17, $18, $20, $21, $7, $8, $9, $4
        WHERE ($12::text IS NULL OR EXISTS (SELECT 1 FROM fence))
          AND ($2 = 0 OR EXISTS (SELECT 1 FROM ${s}.executions WHERE execution_id = $1))
        ON CONFLICT (execution_id) DO UPDATE SET
          head = EXCLUDED.head,
          subject = CASE WHEN $10 THEN COALESCE(EXCLUDED.subject, ${s}.executions.subject) ELSE ${s}.executions.subject END,
          logic_id = CASE WHEN $10 THEN COALESCE(EXCLUDED.logic_id, ${s}.executions.logic_id) ELSE ${s}.executions.logic_id END,
          -- As stores/catalogue.ts folds them: a start or a migration names the hash (kept when it names none);
          -- a migration names the version it moved to (none: no version), a start its own (kept when none).
          machine_hash = CASE WHEN $10 OR $19 THEN COALESCE(EXCLUDED.machine_hash, ${s}.executions.machine_hash) ELSE ${s}.executions.machine_hash END,
          logic_version = CASE WHEN $19 THEN EXCLUDED.logic_version WHEN $10 THEN COALESCE(EXCLUDED.logic_version, ${s}.executions.logic_version) ELSE ${s}.executions.logic_version END,
          started_at = CASE WHEN $10 THEN EXCLUDED.started_at ELSE ${s}.executions.started_at END,
          parent_id = CASE WHEN $10 THEN EXCLUDED.parent_id ELSE ${s}.executions.parent_id END,
          root_id = CASE WHEN $10 THEN EXCLUDED.root_id ELSE ${s}.executions.root_id END,
          status = CASE WHEN $10 OR $11 THEN EXCLUDED.status ELSE ${s}.executions.status END,
          ended_at = CASE WHEN $11 THEN EXCLUDED.ended_at ELSE ${s}.executions.ended_at END
        WHERE ${s}.executions.head = $2
        RETURNING 1
      ), ins AS (
        INSERT INTO ${s}.records (execution_id, seq, body)
        SELECT $1, $2 + t.ord, t.body FROM unnest($3::text[]) WITH ORDINALITY AS t(body, ord)
        WHERE EXISTS (SELECT 1 FROM cat)
      ), released AS (
        -- The end, appended under the lease: the lease is given back by the same statement (no transaction of its own).
        UPDATE ${s}.fleet SET owner = NULL, lease_until = NULL
        WHERE execution_id = $1 AND $11 AND owner = $12 AND epoch = $13::bigint AND EXISTS (SELECT 1 FROM cat)
      ), consumed AS (
        DELETE FROM ${s}.inbox WHERE id = $15::bigint AND execution_id = $1 AND EXISTS (SELECT 1 FROM cat)
      ), note AS (
        SELECT pg_notify($16, $14) FROM cat WHERE $14::text IS NOT NULL
      )
      SELECT (SELECT count(*) FROM cat)::int AS ok, (SELECT count(*) FROM note)::int AS notified`;
  }

  /** The same journal with a worker's hooks on every append (createWorker). */
  withHooks(hooks: AppendHooks): PostgresEventStore {
    return new PostgresEventStore(this.db, hooks);
  }

  async append(executionId: string, expectedSeq: number, records: StoredRecord[]): Promise<void> {
    checkAppendIds(executionId, records);
    assertContiguous(executionId, expectedSeq, records);
    const fence = this.hooks?.fence(executionId, expectedSeq);
    if (records.length === 0) {
      const head = await this.head(executionId);
      if (head !== expectedSeq) throw new ConcurrencyError(executionId, expectedSeq, head);
      return;
    }
    const info = foldCatalogue(executionId, undefined, records);
    const started = records.some((r) => r.type === EXECUTION_STARTED);
    const ended = records.some((r) => r.type === EXECUTION_ENDED);
    const migrated = records.some((r) => r.type === EXECUTION_MIGRATED);
    // A timer firing (its `timerId` stays readable in a sealed record) never journals an inbox message.
    const inboxId = records.some((r) => r.type === EVENT_RECEIVED && r.timerId === undefined)
      ? this.hooks?.inboxMessage(executionId)
      : undefined;
    let ok: number;
    try {
      const { rows } = await this.db.query<{ ok: number }>(
        this.appendSql,
        [
          executionId,
          expectedSeq,
          records.map((r) => JSON.stringify(r)),
          records.at(-1)!.seq,
          info.subject ?? null,
          info.logicId ?? null,
          info.status,
          info.startedAt,
          info.endedAt ?? null,
          started,
          ended,
          fence?.owner ?? null,
          fence?.epoch ?? null,
          ended ? `${NOTIFY.ended}:${executionId}` : expectedSeq === 0 ? `${NOTIFY.runnable}:${executionId}` : null,
          inboxId ?? null,
          this.db.channel,
          info.machineHash ?? null,
          info.version ?? null,
          migrated,
          info.parentId ?? null,
          info.rootId ?? null,
        ],
        APPEND_STATEMENT,
      );
      ok = rows[0]!.ok;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      ok = 0;
    }
    if (ok === 1) {
      if (inboxId !== undefined) this.hooks?.consumed(executionId, inboxId);
      return;
    }
    throw await this.refusal(executionId, expectedSeq, fence);
  }

  // Why an append wrote nothing: the lease (for a worker), else the seq fence.
  private async refusal(executionId: string, expectedSeq: number, fence: LeaseFence | undefined): Promise<Error> {
    const { rows } = await this.db.query<{
      head: number | null;
      owner: string | null;
      epoch: string | null;
      live: boolean | null;
    }>(
      `SELECT e.head, f.owner, f.epoch::text AS epoch, f.lease_until > clock_timestamp() AS live
       FROM (SELECT 1) x LEFT JOIN ${this.db.s}.executions e ON e.execution_id = $1 LEFT JOIN ${this.db.s}.fleet f ON f.execution_id = $1`,
      [executionId],
    );
    const row = rows[0]!;
    if (fence && (row.owner !== fence.owner || row.epoch !== fence.epoch || row.live !== true))
      return new LeaseLostError(executionId, fence.owner);
    return new ConcurrencyError(executionId, expectedSeq, row.head ?? 0);
  }

  async read(executionId: string, fromSeq = 1): Promise<StoredRecord[]> {
    checkStoredId(executionId, "execution id");
    const { rows } = await this.db.query<{ body: string }>(
      `SELECT body FROM ${this.db.s}.records WHERE execution_id = $1 AND seq >= $2 ORDER BY seq`,
      [executionId, fromSeq],
      "lw_read",
    );
    return rows.map((row) => JSON.parse(row.body) as StoredRecord);
  }

  async head(executionId: string): Promise<number> {
    checkStoredId(executionId, "execution id");
    const { rows } = await this.db.query<{ head: number }>(
      `SELECT head FROM ${this.db.s}.executions WHERE execution_id = $1`,
      [executionId],
    );
    return rows[0]?.head ?? 0;
  }

  async getExecution(executionId: string): Promise<ExecutionInfo | undefined> {
    checkStoredId(executionId, "execution id");
    const { rows } = await this.db.query<ExecutionRow>(
      `SELECT ${EXECUTION_COLUMNS} FROM ${this.db.s}.executions WHERE execution_id = $1`,
      [executionId],
      "lw_execution",
    );
    return rows[0] && infoOf(rows[0]);
  }

  async listExecutions(): Promise<ExecutionInfo[]> {
    const { rows } = await this.db.query<ExecutionRow>(
      `SELECT ${EXECUTION_COLUMNS} FROM ${this.db.s}.executions ORDER BY execution_id`,
    );
    return rows.map(infoOf);
  }

  /** The tree `executionId` is in: its root and every execution whose root is that root (the `executions_root` index). */
  async listTree(executionId: string): Promise<ExecutionInfo[]> {
    checkStoredId(executionId, "execution id");
    const s = this.db.s;
    const { rows } = await this.db.query<ExecutionRow>(
      `WITH tree AS (SELECT coalesce(root_id, execution_id) AS root FROM ${s}.executions WHERE execution_id = $1)
       SELECT ${EXECUTION_COLUMNS} FROM ${s}.executions
       WHERE execution_id = (SELECT root FROM tree) OR root_id = (SELECT root FROM tree)`,
      [executionId],
      "list_tree",
    );
    return rows.map(infoOf);
  }

  /** The executions of one subject (the catalogue's subject index), ordered by id. */
  async listExecutionsOf(subject: string): Promise<ExecutionInfo[]> {
    checkStoredId(subject, "subject");
    const { rows } = await this.db.query<ExecutionRow>(
      `SELECT ${EXECUTION_COLUMNS} FROM ${this.db.s}.executions WHERE subject = $1 ORDER BY execution_id`,
      [subject],
    );
    return rows.map(infoOf);
  }

  async putSnapshot(executionId: string, snapshot: StoredSnapshot): Promise<void> {
    checkStoredId(executionId, "execution id");
    const s = this.db.s;
    const { rows } = await this.db.query<{ known: boolean }>(
      `WITH put AS (
         INSERT INTO ${s}.snapshots (execution_id, seq, at, state)
         SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM ${s}.executions WHERE execution_id = $1)
         ON CONFLICT (execution_id) DO UPDATE SET seq = EXCLUDED.seq, at = EXCLUDED.at, state = EXCLUDED.state
         WHERE ${s}.snapshots.seq < EXCLUDED.seq
       )
       SELECT EXISTS (SELECT 1 FROM ${s}.executions WHERE execution_id = $1) AS known`,
      [executionId, snapshot.seq, snapshot.at, JSON.stringify(snapshot.state)],
    );
    if (!rows[0]!.known) throw new RangeError(`Execution "${executionId}" has no log; a snapshot needs one.`);
  }

  async getSnapshot(executionId: string): Promise<StoredSnapshot | undefined> {
    checkStoredId(executionId, "execution id");
    const { rows } = await this.db.query<{ seq: number; at: number; state: string }>(
      `SELECT seq, at, state FROM ${this.db.s}.snapshots WHERE execution_id = $1`,
      [executionId],
      "lw_snapshot",
    );
    const row = rows[0];
    return row && { seq: row.seq, at: row.at, state: JSON.parse(row.state) as unknown };
  }

  async archive(executionId: string, throughSeq: number): Promise<void> {
    checkStoredId(executionId, "execution id");
    const s = this.db.s;
    await this.db.transaction(async (client) => {
      const { rows } = await client.query<{ head: number; archived_through: number }>(
        `SELECT head, archived_through FROM ${s}.executions WHERE execution_id = $1 FOR UPDATE`,
        [executionId],
      );
      const row = rows[0];
      if (!row) throw new RangeError(`Execution "${executionId}" has no log to archive.`);
      if (throughSeq > row.head || throughSeq <= row.archived_through) {
        throw new RangeError(
          `Execution "${executionId}": cannot archive through seq ${throughSeq}; archived through ${row.archived_through}, head ${row.head}.`,
        );
      }
      const moved = await client.query<{ seq: number; body: string }>(
        `DELETE FROM ${s}.records WHERE execution_id = $1 AND seq <= $2 RETURNING seq, body`,
        [executionId, throughSeq],
      );
      const bodies = moved.rows.sort((a, b) => a.seq - b.seq).map((r) => r.body);
      await client.query(`INSERT INTO ${s}.archives (execution_id, from_seq, to_seq, body) VALUES ($1, $2, $3, $4)`, [
        executionId,
        row.archived_through + 1,
        throughSeq,
        `[${bodies.join(",")}]`,
      ]);
      await client.query(`UPDATE ${s}.executions SET archived_through = $2 WHERE execution_id = $1`, [
        executionId,
        throughSeq,
      ]);
    });
  }

  async readArchives(executionId: string): Promise<ArchiveSegment[]> {
    checkStoredId(executionId, "execution id");
    const { rows } = await this.db.query<{ from_seq: number; to_seq: number; body: string }>(
      `SELECT from_seq, to_seq, body FROM ${this.db.s}.archives WHERE execution_id = $1 ORDER BY from_seq`,
      [executionId],
    );
    return rows.map((row) => ({
      fromSeq: row.from_seq,
      toSeq: row.to_seq,
      records: JSON.parse(row.body) as StoredRecord[],
    }));
  }

  async deleteHistory(executionId: string): Promise<void> {
    checkStoredId(executionId, "execution id");
    const s = this.db.s;
    await this.db.transaction(async (client) => {
      for (const table of ["records", "archives", "snapshots", "inbox", "fleet", "stream_items", "executions"]) {
        await client.query(`DELETE FROM ${s}.${table} WHERE execution_id = $1`, [executionId]);
      }
    });
  }

  /** Closes the stores' pool (all three stores share it). */
  close(): Promise<void> {
    return this.db.close();
  }
}
