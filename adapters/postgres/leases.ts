// The fleet's leases in SQL: claim (FOR UPDATE SKIP LOCKED, the epoch bumped), heartbeat (only the leases
// still held at the epoch claimed), release. Expiry is judged by the database's clock alone.
import type { PgDatabase } from "./database.js";
import { NOTIFY } from "./constants.js";

/** A lease a worker holds: the execution and the epoch its claim got. */
export interface Lease {
  executionId: string;
  epoch: string;
}

export class LeaseTable {
  constructor(
    private readonly db: PgDatabase,
    readonly owner: string,
    private readonly leaseMs: number,
  ) {}

  /**
   * Claims up to `limit` runnable executions: submitted, running, and unleased or their lease expired; a parked one
   * only once a child it waits on ended or its inbox holds a message (it is unparked by the claim). A queued one only
   * once admitted (it holds a slot of its queue: `admit`). `queued`: executions wait for admission.
   */
  async claim(limit: number, holding: readonly string[]): Promise<{ leases: Lease[]; queued: boolean }> {
    const s = this.db.s;
    const { rows } = await this.db.query<{ execution_id: string | null; epoch: string | null; queued: boolean | null }>(
      `WITH claimed AS (
         UPDATE ${s}.fleet f SET owner = $1, epoch = f.epoch + 1, lease_until = clock_timestamp() + $2 * interval '1 millisecond', waiting_on = NULL
         WHERE f.execution_id IN (
           SELECT fl.execution_id FROM ${s}.fleet fl JOIN ${s}.executions e ON e.execution_id = fl.execution_id
           WHERE e.status = 'running' AND (fl.owner IS NULL OR fl.lease_until < clock_timestamp()) AND NOT (fl.execution_id = ANY($4::text[]))
             AND (fl.queue IS NULL OR fl.admitted_at IS NOT NULL)
             AND (fl.waiting_on IS NULL
               OR EXISTS (SELECT 1 FROM ${s}.inbox i WHERE i.execution_id = fl.execution_id)
               OR EXISTS (SELECT 1 FROM ${s}.executions c WHERE c.execution_id = ANY(fl.waiting_on) AND c.status <> 'running'))
           ORDER BY fl.submitted_at LIMIT $3
           FOR UPDATE OF fl SKIP LOCKED)
         RETURNING f.execution_id, f.epoch::text AS epoch
       )
       SELECT execution_id, epoch, NULL::boolean AS queued FROM claimed
       UNION ALL
       SELECT NULL, NULL, EXISTS (SELECT 1 FROM ${s}.fleet q WHERE q.queue IS NOT NULL AND q.admitted_at IS NULL)`,
      [this.owner, this.leaseMs, limit, holding],
      "lw_claim",
    );
    const leases: Lease[] = [];
    let queued = false;
    for (const row of rows) {
      if (row.execution_id !== null) leases.push({ executionId: row.execution_id, epoch: row.epoch! });
      else queued = row.queued === true;
    }
    return { leases, queued };
  }

  /**
   * Admits and claims up to `limit` queued executions within their queues' limits, by priority (lower first), then in
   * turn over keys (each key's oldest first), then submit order. A slot is held from admission until the execution
   * ended (parked, waiting for an event, or between workers after a crash included). Admission is serialized per queue
   * by a lock on its row, and the limits are counted after that lock is held (a later statement's snapshot), so two
   * workers never admit past a limit together.
   */
  async admit(limit: number): Promise<Lease[]> {
    if (limit <= 0) return [];
    const s = this.db.s;
    return this.db.transaction(async (client) => {
      const { rows: locked } = await client.query<{ name: string }>(
        `SELECT q.name FROM ${s}.queues q
         WHERE EXISTS (SELECT 1 FROM ${s}.fleet f WHERE f.queue = q.name AND f.admitted_at IS NULL)
         ORDER BY q.name FOR UPDATE`,
      );
      if (locked.length === 0) return [];
      const names = locked.map((q) => q.name);
      // Slots of executions that ended are given back (they are never counted; this keeps the index small).
      await client.query(
        `UPDATE ${s}.fleet f SET slot = false FROM ${s}.executions e
         WHERE f.slot AND f.queue = ANY($1::text[]) AND e.execution_id = f.execution_id AND e.status <> 'running'`,
        [names],
      );
      const { rows } = await client.query<{ execution_id: string; epoch: string }>(
        `WITH q AS (
           SELECT name, concurrency, per_key, rate_limit, rate_period_ms FROM ${s}.queues WHERE name = ANY($3::text[])
         ), held AS (
           SELECT f.queue, f.queue_key, count(*) AS n FROM ${s}.fleet f JOIN ${s}.executions e ON e.execution_id = f.execution_id
           WHERE f.slot AND f.queue = ANY($3::text[]) AND e.status = 'running' GROUP BY f.queue, f.queue_key
         ), held_q AS (
           SELECT queue, sum(n) AS n FROM held GROUP BY queue
         ), started AS (
           SELECT f.queue, f.queue_key, count(*) AS n FROM ${s}.fleet f JOIN q ON q.name = f.queue
           WHERE q.rate_limit IS NOT NULL AND f.admitted_at IS NOT NULL
             AND f.admitted_at > clock_timestamp() - q.rate_period_ms * interval '1 millisecond'
           GROUP BY f.queue, f.queue_key
         ), waiting AS (
           SELECT f.execution_id, f.queue, f.queue_key, f.priority, f.submitted_at,
             row_number() OVER (PARTITION BY f.queue, f.queue_key ORDER BY f.priority, f.submitted_at, f.execution_id) AS rk
           FROM ${s}.fleet f JOIN ${s}.executions e ON e.execution_id = f.execution_id
           WHERE f.queue = ANY($3::text[]) AND f.admitted_at IS NULL AND e.status = 'running'
         ), fit_key AS (
           SELECT w.*, q.concurrency FROM waiting w JOIN q ON q.name = w.queue
           LEFT JOIN held h ON h.queue = w.queue AND h.queue_key = w.queue_key
           LEFT JOIN started st ON st.queue = w.queue AND st.queue_key = w.queue_key
           WHERE (q.per_key IS NULL OR w.rk <= q.per_key - COALESCE(h.n, 0))
             AND (q.rate_limit IS NULL OR w.rk <= q.rate_limit - COALESCE(st.n, 0))
         ), fit AS (
           SELECT fk.execution_id, fk.priority, fk.rk, fk.submitted_at, fk.concurrency, COALESCE(hq.n, 0) AS busy,
             row_number() OVER (PARTITION BY fk.queue ORDER BY fk.priority, fk.rk, fk.submitted_at, fk.execution_id) AS rq
           FROM fit_key fk LEFT JOIN held_q hq ON hq.queue = fk.queue
         ), chosen AS (
           SELECT execution_id FROM fit WHERE concurrency IS NULL OR rq <= concurrency - busy
           ORDER BY priority, rk, submitted_at, execution_id LIMIT $4
         )
         UPDATE ${s}.fleet f SET owner = $1, epoch = f.epoch + 1, lease_until = clock_timestamp() + $2 * interval '1 millisecond',
           waiting_on = NULL, admitted_at = clock_timestamp(), slot = true
         FROM chosen c WHERE f.execution_id = c.execution_id AND f.admitted_at IS NULL
         RETURNING f.execution_id, f.epoch::text AS epoch`,
        [this.owner, this.leaseMs, names, limit],
      );
      return rows.map((row) => ({ executionId: row.execution_id, epoch: row.epoch }));
    });
  }

  /** Extends the leases still held; returns the ids of those held no more (expired and taken over). */
  async heartbeat(leases: readonly Lease[]): Promise<string[]> {
    if (leases.length === 0) return [];
    const { rows } = await this.db.query<{ execution_id: string }>(
      `UPDATE ${this.db.s}.fleet f SET lease_until = clock_timestamp() + $2 * interval '1 millisecond'
       FROM unnest($3::text[], $4::bigint[]) AS h(id, epoch)
       WHERE f.execution_id = h.id AND f.epoch = h.epoch AND f.owner = $1
       RETURNING f.execution_id`,
      [this.owner, this.leaseMs, leases.map((l) => l.executionId), leases.map((l) => l.epoch)],
    );
    const held = new Set(rows.map((r) => r.execution_id));
    return leases.filter((l) => !held.has(l.executionId)).map((l) => l.executionId);
  }

  /** Gives leases back at once (a drained worker, an ended execution) and tells the fleet of those still running (an ended one is nothing to claim). */
  async release(leases: readonly Lease[]): Promise<void> {
    if (leases.length === 0) return;
    await this.db.query(
      `WITH released AS (
         UPDATE ${this.db.s}.fleet f SET owner = NULL, lease_until = NULL
         FROM unnest($2::text[], $3::bigint[]) AS h(id, epoch)
         WHERE f.execution_id = h.id AND f.epoch = h.epoch AND f.owner = $1
         RETURNING f.execution_id
       )
       SELECT pg_notify($4, '${NOTIFY.runnable}:' || r.execution_id)
       FROM released r JOIN ${this.db.s}.executions e ON e.execution_id = r.execution_id
       WHERE e.status = 'running'`,
      [this.owner, leases.map((l) => l.executionId), leases.map((l) => l.epoch), this.db.channel],
      "lw_release",
    );
  }

  /**
   * Parks an execution this worker holds (ADR 0012 D9): its lease given back, and claimable again only once one of
   * `waitingOn` (child executions) ended or a message reached its inbox. A no-op once the lease is not held.
   */
  async park(lease: Lease, waitingOn: readonly string[]): Promise<void> {
    await this.db.query(
      `UPDATE ${this.db.s}.fleet f SET owner = NULL, lease_until = NULL, waiting_on = $4::text[]
       WHERE f.execution_id = $2 AND f.epoch = $3 AND f.owner = $1`,
      [this.owner, lease.executionId, lease.epoch, waitingOn],
      "lw_park",
    );
  }

  /** The oldest inbox messages of an execution. */
  async inbox(executionId: string, limit = 32): Promise<{ id: string; event: string }[]> {
    const { rows } = await this.db.query<{ id: string; event: string }>(
      `SELECT id::text AS id, event FROM ${this.db.s}.inbox WHERE execution_id = $1 ORDER BY id LIMIT $2`,
      [executionId, limit],
    );
    return rows;
  }

  /** Drops an inbox message that can never be journaled (its execution ended, or the event was refused). */
  async dropInbox(id: string): Promise<void> {
    await this.db.query(`DELETE FROM ${this.db.s}.inbox WHERE id = $1::bigint`, [id]);
  }

  /** Of `ids`, those with inbox messages waiting. */
  async withInbox(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.db.query<{ execution_id: string }>(
      `SELECT DISTINCT execution_id FROM ${this.db.s}.inbox WHERE execution_id = ANY($1::text[])`,
      [ids],
      "lw_inbox_any",
    );
    return rows.map((r) => r.execution_id);
  }
}
