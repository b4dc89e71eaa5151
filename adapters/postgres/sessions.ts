// Failover at session end. A worker registers in the `workers` table from a connection of its own that holds a
// session-level advisory lock for the process's lifetime; PostgreSQL releases that lock when the session ends (the
// process died, its socket closed). Every worker looks every `sessionCheckMs` for registrations whose lock no session
// holds, and gives those workers' leases back at once (the next claim bumps each epoch, as after an expiry). A worker
// frozen with its session open (SIGSTOP, a GC pause) keeps its lock, so its leases expire as before.
import type pg from "pg";
import { NOTIFY, WORKER_LOCK_PREFIX } from "./constants.js";
import type { PgDatabase } from "./database.js";

const RECONNECT_MS = 250;

export class WorkerSession {
  private client: pg.Client | undefined;
  private key: number | undefined;
  private closed = false;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly lockName: string;
  private readonly reapSql: string;

  constructor(
    private readonly db: PgDatabase,
    private readonly workerId: string,
    /** Called when this worker's session ended while it runs: its leases may be given back by any other worker now. */
    private readonly onLost: () => void,
    /** Called when it registered again after that (the server is reachable again). */
    private readonly onReopened: () => void = () => undefined,
  ) {
    this.lockName = `${WORKER_LOCK_PREFIX}.${db.schema}`;
    const s = db.s;
    // Registrations whose advisory lock no session holds (read live from pg_locks, not from a snapshot). A worker takes
    // its lock before it inserts its row, so a row that can be seen without its lock is a session that ended. Only the
    // leases of a worker id with no live registration left are given back (a worker that reconnected keeps its own).
    this.reapSql = `
      WITH dead AS (
        DELETE FROM ${s}.workers w WHERE w.session_key IN (
          SELECT x.session_key FROM ${s}.workers x
          WHERE NOT EXISTS (
            SELECT 1 FROM pg_locks l
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND l.classid::bigint = (hashtext($1) & 2147483647) AND l.objid::bigint = x.session_key)
          FOR UPDATE SKIP LOCKED)
        RETURNING w.session_key, w.worker_id
      ), freed AS (
        UPDATE ${s}.fleet f SET owner = NULL, lease_until = NULL
        WHERE f.owner IN (SELECT worker_id FROM dead)
          AND NOT EXISTS (SELECT 1 FROM ${s}.workers live WHERE live.worker_id = f.owner
                            AND live.session_key NOT IN (SELECT session_key FROM dead))
        RETURNING f.execution_id
      )
      SELECT pg_notify($2, '${NOTIFY.runnable}:' || execution_id) FROM freed`;
  }

  /** Registers this worker's session; resolves once its lock is held and its row is in. */
  async open(): Promise<void> {
    const client = this.db.client();
    client.on("error", () => this.dropped(client));
    client.on("end", () => this.dropped(client));
    try {
      await client.connect();
      const { rows } = await client.query<{ key: number }>(
        `SELECT nextval('${this.db.s}.worker_sessions')::int AS key`,
      );
      const key = rows[0]!.key;
      // The lock first, then the row: a registration is never visible without its lock held.
      await client.query("SELECT pg_advisory_lock(hashtext($1) & 2147483647, $2)", [this.lockName, key]);
      await client.query(`INSERT INTO ${this.db.s}.workers (session_key, worker_id) VALUES ($1, $2)`, [
        key,
        this.workerId,
      ]);
      this.client = client;
      this.key = key;
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  /** Gives back the leases of workers whose session ended; returns how many. */
  async reap(): Promise<number> {
    const { rowCount } = await this.db.query(this.reapSql, [this.lockName, this.db.channel], "lw_reap");
    return rowCount ?? 0;
  }

  // The session ended under a live process (the server restarted, an administrator ended it, the network dropped):
  // any worker may give this worker's leases back now, so it gives them up at once, and registers again.
  private dropped(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.key = undefined;
    void client.end().catch(() => undefined);
    if (this.closed) return;
    this.onLost();
    const attempt = () => {
      this.reconnectTimer = undefined;
      if (this.closed) return;
      this.open().then(
        () => this.onReopened(),
        () => (this.reconnectTimer = setTimeout(attempt, RECONNECT_MS)),
      );
    };
    this.reconnectTimer = setTimeout(attempt, RECONNECT_MS);
  }

  /** Removes the registration and ends the session (a drained worker). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    await client.query(`DELETE FROM ${this.db.s}.workers WHERE session_key = $1`, [this.key]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}
