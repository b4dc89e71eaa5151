// The stores' side of the fleet: the queue app.submit puts executions on, an execution's inbox, and the
// wait for an execution's end (LISTEN/NOTIFY, with a poll as the floor when a notification is lost).
import { UnknownExecutionError } from "../../actors/errors.js";
import { plainExternalEvent } from "../../actors/journal/externalEvents.js";
import { checkStoredId } from "../../stores/ids.js";
import type { FleetMessage, FleetPlacement, FleetPort } from "../../stores/types.js";
import { FLEET_MESSAGE_KEY, NOTIFY, WORKER_DEFAULTS } from "./constants.js";
import type { Notification, PgDatabase } from "./database.js";

// The poll floor of a wait while LISTEN is up.
const LISTENING_POLL_MS = 10_000;

/** The fleet's queue, inboxes and end notifications on one schema (`PostgresStores.fleet`). */
export class PostgresFleet implements FleetPort {
  private readonly waiters = new Map<string, Set<() => void>>();
  private subscribed: Promise<unknown> | undefined;
  private listening = false;
  private readonly storedQueues = new Map<string, string>();

  constructor(
    private readonly db: PgDatabase,
    private readonly pollMs: number = WORKER_DEFAULTS.pollMs,
  ) {}

  /**
   * Puts the execution on the fleet's queue, with its placement when it waits in a queue (`app.submit({ queue })`):
   * the queue's limits are stored first (the last app to submit to a queue with other limits sets them for the fleet).
   */
  async enqueue(executionId: string, placement?: FleetPlacement): Promise<void> {
    checkStoredId(executionId, "execution id");
    if (!placement) {
      await this.db.query(
        `INSERT INTO ${this.db.s}.fleet (execution_id) VALUES ($1) ON CONFLICT (execution_id) DO NOTHING`,
        [executionId],
      );
      return;
    }
    await this.storeQueue(placement);
    await this.db.query(
      `INSERT INTO ${this.db.s}.fleet (execution_id, queue, queue_key, priority) VALUES ($1, $2, $3, $4)
       ON CONFLICT (execution_id) DO NOTHING`,
      [executionId, placement.queue, placement.key, placement.priority],
    );
  }

  // Once per queue and definition in this process: an upsert that writes only when the limits differ.
  private async storeQueue({ queue, limits }: FleetPlacement): Promise<void> {
    const values = [
      queue,
      limits.concurrency ?? null,
      limits.perKey ?? null,
      limits.rate?.limit ?? null,
      limits.rate?.periodMs ?? null,
    ];
    const signature = JSON.stringify(values);
    if (this.storedQueues.get(queue) === signature) return;
    await this.db.query(
      `INSERT INTO ${this.db.s}.queues AS q (name, concurrency, per_key, rate_limit, rate_period_ms) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (name) DO UPDATE SET concurrency = EXCLUDED.concurrency, per_key = EXCLUDED.per_key,
         rate_limit = EXCLUDED.rate_limit, rate_period_ms = EXCLUDED.rate_period_ms, updated_at = clock_timestamp()
       WHERE (q.concurrency, q.per_key, q.rate_limit, q.rate_period_ms) IS DISTINCT FROM
         (EXCLUDED.concurrency, EXCLUDED.per_key, EXCLUDED.rate_limit, EXCLUDED.rate_period_ms)`,
      values,
    );
    this.storedQueues.set(queue, signature);
  }

  async isSubmitted(executionId: string): Promise<boolean> {
    checkStoredId(executionId, "execution id");
    const { rowCount } = await this.db.query(`SELECT 1 FROM ${this.db.s}.fleet WHERE execution_id = $1`, [executionId]);
    return rowCount === 1;
  }

  async waitForEnd(executionId: string): Promise<void> {
    checkStoredId(executionId, "execution id");
    // A failed LISTEN leaves the poll: the wait never depends on the notification arriving. While LISTEN
    // is up, an end is always notified (the append that journals it notifies on commit, and a reconnect
    // wakes every waiter), so the poll is only a floor and need not hammer the table.
    const wasListening = this.listening;
    await (this.subscribed ??= this.db
      .subscribe((n) => this.notified(n))
      .then(
        () => (this.listening = true),
        () => (this.subscribed = undefined),
      ));
    // The first wait may have started before LISTEN was up: it keeps the short poll.
    const floorMs = wasListening && this.listening ? Math.max(this.pollMs, LISTENING_POLL_MS) : this.pollMs;
    await new Promise<void>((resolve) => {
      const waiters = this.waiters.get(executionId) ?? new Set();
      this.waiters.set(executionId, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0) this.waiters.delete(executionId);
        resolve();
      };
      const timer = setTimeout(done, floorMs);
      waiters.add(done);
    });
  }

  /**
   * Puts `event` in the execution's inbox; the worker holding its lease journals and delivers it. Checked
   * before the insert, as every entry checks an external event (`plainExternalEvent`): ConfigError for a value
   * that is not a plain-JSON object with a string `type`, ReservedEventError for `xstate.*`, `@xstate.*` or
   * `loom.*`, ApprovalMalformedError for a malformed TOOL_APPROVAL; UnknownExecutionError when the execution
   * has no log. Whether a decision's call still waits is known only where the execution runs: the worker
   * refuses one that does not when it delivers it, journals nothing and drops the row.
   */
  async send(executionId: string, event: { type: string }): Promise<void> {
    checkStoredId(executionId, "execution id");
    const plain = plainExternalEvent(event, executionId);
    await this.enqueueInbox(executionId, plain);
  }

  // The insert happens only when the execution has a log (live records, or archive segments): an id that has
  // none is refused, never queued. The catalogue row is not read: a send never waits on a catalogue lock.
  private async enqueueInbox(executionId: string, event: unknown): Promise<void> {
    const { rowCount } = await this.db.query(
      `WITH put AS (
         INSERT INTO ${this.db.s}.inbox (execution_id, event)
         SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM ${this.db.s}.records WHERE execution_id = $1)
                          OR EXISTS (SELECT 1 FROM ${this.db.s}.archives WHERE execution_id = $1)
         RETURNING id)
       SELECT pg_notify($3, $4) FROM put`,
      [executionId, JSON.stringify(event), this.db.channel, `${NOTIFY.inbox}:${executionId}`],
    );
    if (rowCount !== 1) throw new UnknownExecutionError(executionId);
  }

  /** ADR 0012 D9: a tree's message or stop in the inbox, under the key the worker routes by (FLEET_MESSAGE_KEY). */
  async message(executionId: string, message: FleetMessage): Promise<void> {
    checkStoredId(executionId, "execution id");
    await this.enqueueInbox(executionId, { type: FLEET_MESSAGE_KEY, [FLEET_MESSAGE_KEY]: message });
  }

  private notified(notification: Notification): void {
    if (notification.kind === "reconnected") {
      for (const waiters of [...this.waiters.values()]) for (const wake of [...waiters]) wake();
    } else if (notification.kind === NOTIFY.ended) {
      for (const wake of [...(this.waiters.get(notification.executionId) ?? [])]) wake();
    }
  }
}
