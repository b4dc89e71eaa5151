// The stores' side of the fleet: the queue app.submit puts executions on, an execution's inbox, and the
// wait for an execution's end (LISTEN/NOTIFY, with a poll as the floor when a notification is lost).
import { UnknownExecutionError } from "../../actors/errors.js";
import { plainExternalEvent } from "../../actors/journal/externalEvents.js";
import { checkStoredId } from "../../stores/ids.js";
import type { FleetMessage, FleetPort } from "../../stores/types.js";
import { FLEET_MESSAGE_KEY, NOTIFY, WORKER_DEFAULTS } from "./constants.js";
import type { Notification, PgDatabase } from "./database.js";

// The poll floor of a wait while LISTEN is up.
const LISTENING_POLL_MS = 10_000;

/** The fleet's queue, inboxes and end notifications on one schema (`PostgresStores.fleet`). */
export class PostgresFleet implements FleetPort {
  private readonly waiters = new Map<string, Set<() => void>>();
  private subscribed: Promise<unknown> | undefined;
  private listening = false;

  constructor(
    private readonly db: PgDatabase,
    private readonly pollMs: number = WORKER_DEFAULTS.pollMs,
  ) {}

  async enqueue(executionId: string): Promise<void> {
    checkStoredId(executionId, "execution id");
    await this.db.query(
      `INSERT INTO ${this.db.s}.fleet (execution_id) VALUES ($1) ON CONFLICT (execution_id) DO NOTHING`,
      [executionId],
    );
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
