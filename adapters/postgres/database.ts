// What the three PostgreSQL stores share: the pool, the schema's quoted name, the migrations applied at
// open, transactions, and one LISTEN connection (reconnected after the server restarts) for the fleet.
import pg from "pg";
import { CHANNEL_PREFIX, SCHEMA_NAME } from "./constants.js";
import { PostgresStoresClosedError, SchemaVersionError } from "./errors.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./migrations.js";

export type Queryable = Pick<pg.PoolClient, "query">;

/** A notification on the schema's channel: `<kind>:<executionId>`; `reconnected` after the listener came back. */
export type Notification = { kind: string; executionId: string } | { kind: "reconnected"; executionId: "" };

const RECONNECT_MS = 250;

export class PgDatabase {
  /** The schema, quoted for SQL. */
  readonly s: string;
  readonly channel: string;
  private closed = false;
  private listener: pg.Client | undefined;
  private listening: Promise<void> | undefined;
  private readonly subscribers = new Set<(n: Notification) => void>();
  // Channels of their own LISTENed to on the same connection (a followed execution's stream), with their listeners.
  private readonly channels = new Map<string, Set<() => void>>();
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly pool: pg.Pool,
    readonly schema: string,
    private readonly ownsPool: boolean,
    private readonly connectionConfig: pg.ClientConfig,
    private readonly prepared = true,
  ) {
    if (!SCHEMA_NAME.test(schema))
      throw new RangeError(
        `postgresStores: schema must match ${SCHEMA_NAME} (a plain lower-case identifier); got ${JSON.stringify(schema)}.`,
      );
    this.s = `"${schema}"`;
    this.channel = `${CHANNEL_PREFIX}_${schema}`;
    // An idle pooled connection dropped by a server restart is discarded by the pool; without a listener
    // the 'error' event would end the process.
    pool.on("error", () => undefined);
  }

  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    values?: unknown[],
    name?: string,
  ): Promise<pg.QueryResult<R>> {
    if (this.closed) return Promise.reject(new PostgresStoresClosedError("query"));
    // A named statement is parsed and planned once per connection; later calls send only its parameters.
    return name === undefined || !this.prepared
      ? this.pool.query<R>(sql, values)
      : this.pool.query<R>({ name: `${name}_${this.schema}`, text: sql, values: values ?? [] });
  }

  /** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  async transaction<T>(work: (client: Queryable) => Promise<T>): Promise<T> {
    if (this.closed) throw new PostgresStoresClosedError("start a transaction");
    const client = await this.pool.connect();
    let broken: unknown;
    // A checked-out client's connection that drops between two statements (a server restart) emits 'error' with no
    // query to reject: unheard, it would end the process. Heard here, the next statement fails and the client is
    // discarded at its release.
    const onError = (error: unknown) => (broken ??= error);
    client.on("error", onError);
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      const rollback: unknown = await client.query("ROLLBACK").then(
        () => undefined,
        (e: unknown) => e,
      );
      broken ??= rollback;
      throw error;
    } finally {
      client.off("error", onError);
      client.release(broken instanceof Error ? broken : broken === undefined ? undefined : new Error(String(broken)));
    }
  }

  /** Applies the migrations this schema lacks, in order, under a lock (several workers may open at once). */
  async migrate(): Promise<void> {
    await this.transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`loomwork.migrate.${this.schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.s}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.s}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const { rows } = await client.query<{ version: number | null }>(
        `SELECT max(version) AS version FROM ${this.s}.schema_migrations`,
      );
      const current = rows[0]?.version ?? 0;
      if (current > SCHEMA_VERSION) throw new SchemaVersionError(this.schema, current, SCHEMA_VERSION);
      for (const migration of MIGRATIONS) {
        if (migration.version <= current) continue;
        await client.query(migration.sql(this.s));
        await client.query(`INSERT INTO ${this.s}.schema_migrations (version, name) VALUES ($1, $2)`, [
          migration.version,
          migration.name,
        ]);
      }
    });
  }

  /** The schema version recorded in the database. */
  async version(): Promise<number> {
    const { rows } = await this.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${this.s}.schema_migrations`,
    );
    return rows[0]?.version ?? 0;
  }

  /** A connection of its own, outside the pool (a worker's session: createWorker); the caller connects and ends it. */
  client(): pg.Client {
    if (this.closed) throw new PostgresStoresClosedError("open a connection");
    return new pg.Client(this.connectionConfig);
  }

  /** Subscribes to the schema's notifications; the first subscriber opens the LISTEN connection. */
  async subscribe(listener: (n: Notification) => void): Promise<() => void> {
    this.subscribers.add(listener);
    await (this.listening ??= this.listen());
    return () => void this.subscribers.delete(listener);
  }

  /**
   * Listens to a channel of its own on the LISTEN connection (opened if need be) until the returned function is
   * called; `listener` is also called after the connection came back, as notifications meanwhile are lost.
   */
  async listenTo(channel: string, listener: () => void): Promise<() => void> {
    let listeners = this.channels.get(channel);
    const first = !listeners;
    if (!listeners) this.channels.set(channel, (listeners = new Set()));
    listeners.add(listener);
    const unlisten = () => {
      if (!listeners.delete(listener) || listeners.size > 0 || this.channels.get(channel) !== listeners) return;
      this.channels.delete(channel);
      this.listener?.query(`UNLISTEN "${channel}"`).catch(() => undefined);
    };
    await (this.listening ??= this.listen());
    // listen() LISTENs to every channel known when it connects; one added since is LISTENed here.
    if (first && this.listener) await this.listener.query(`LISTEN "${channel}"`);
    return unlisten;
  }

  private async listen(): Promise<void> {
    const client = new pg.Client(this.connectionConfig);
    client.on("error", () => this.relisten(client));
    client.on("end", () => this.relisten(client));
    client.on("notification", (message) => {
      if (message.channel !== this.channel) {
        for (const listener of [...(this.channels.get(message.channel) ?? [])]) listener();
        return;
      }
      const payload = message.payload ?? "";
      const colon = payload.indexOf(":");
      if (colon < 0) return;
      this.emit({ kind: payload.slice(0, colon), executionId: payload.slice(colon + 1) });
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
      for (const channel of this.channels.keys()) await client.query(`LISTEN "${channel}"`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.listener = client;
  }

  // The listener's connection died (a server restart): connect again until it works, then say so, since
  // notifications sent meanwhile are lost and subscribers must look at the tables again.
  private relisten(dead: pg.Client): void {
    if (this.closed || this.listener !== dead || this.reconnectTimer) return;
    this.listener = undefined;
    void dead.end().catch(() => undefined);
    const attempt = () => {
      this.reconnectTimer = undefined;
      if (this.closed) return;
      this.listen().then(
        () => this.emit({ kind: "reconnected", executionId: "" }),
        () => (this.reconnectTimer = setTimeout(attempt, RECONNECT_MS)),
      );
    };
    this.reconnectTimer = setTimeout(attempt, RECONNECT_MS);
  }

  private emit(notification: Notification): void {
    for (const subscriber of [...this.subscribers]) subscriber(notification);
    if (notification.kind === "reconnected")
      for (const listeners of this.channels.values()) for (const listener of [...listeners]) listener();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    await this.listener?.end().catch(() => undefined);
    if (this.ownsPool) await this.pool.end();
  }
}
