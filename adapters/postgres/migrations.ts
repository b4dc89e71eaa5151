// The database schema, as versioned migrations applied in order at open. A migration is never edited once
// released: a change is a new entry at the end. `schema_migrations` records which ran.

/** One schema change; `sql` gets the quoted schema name. */
export interface Migration {
  version: number;
  name: string;
  sql: (s: string) => string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "journal, content and keys",
    sql: (s) => `
      CREATE TABLE ${s}.executions (
        execution_id text COLLATE "C" PRIMARY KEY,
        subject text,
        logic_id text,
        status text NOT NULL,
        started_at double precision NOT NULL,
        ended_at double precision,
        head integer NOT NULL,
        archived_through integer NOT NULL DEFAULT 0
      );
      CREATE INDEX executions_subject ON ${s}.executions (subject) WHERE subject IS NOT NULL;
      CREATE INDEX executions_status ON ${s}.executions (status);
      -- A record is its JSON text, byte for byte: exact round trips (jsonb would reorder keys and refuse \\u0000).
      CREATE TABLE ${s}.records (
        execution_id text COLLATE "C" NOT NULL,
        seq integer NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (execution_id, seq)
      );
      CREATE TABLE ${s}.archives (
        execution_id text COLLATE "C" NOT NULL,
        from_seq integer NOT NULL,
        to_seq integer NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (execution_id, from_seq)
      );
      CREATE TABLE ${s}.snapshots (
        execution_id text COLLATE "C" PRIMARY KEY,
        seq integer NOT NULL,
        at double precision NOT NULL,
        state text NOT NULL
      );
      CREATE SEQUENCE ${s}.touch_clock;
      CREATE TABLE ${s}.blobs (
        address text COLLATE "C" PRIMARY KEY,
        bytes bytea NOT NULL,
        size integer NOT NULL,
        touched_at bigint NOT NULL
      );
      CREATE TABLE ${s}.subject_keys (
        subject text PRIMARY KEY,
        key bytea,
        destroyed boolean NOT NULL DEFAULT false
      );`,
  },
  {
    version: 2,
    name: "the fleet: leases and inboxes",
    sql: (s) => `
      CREATE TABLE ${s}.fleet (
        execution_id text COLLATE "C" PRIMARY KEY,
        submitted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        owner text,
        epoch bigint NOT NULL DEFAULT 0,
        lease_until timestamptz
      );
      CREATE INDEX fleet_claimable ON ${s}.fleet (submitted_at);
      CREATE INDEX fleet_owner ON ${s}.fleet (owner) WHERE owner IS NOT NULL;
      CREATE TABLE ${s}.inbox (
        id bigserial PRIMARY KEY,
        execution_id text COLLATE "C" NOT NULL,
        event text NOT NULL,
        sent_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX inbox_execution ON ${s}.inbox (execution_id, id);`,
  },
  {
    version: 3,
    name: "the catalogue keeps the logic version and machine hash",
    // Rows of executions started before: filled from the newest start or migration record still in the
    // live log (the LIKE filter skips parsing records that cannot be one; the type is then checked).
    // One whose start was archived keeps NULL: ExecutionInfo then has no machineHash, and the runtime
    // reads the record itself, as with a catalogue an older release folded.
    sql: (s) => `
      ALTER TABLE ${s}.executions ADD COLUMN machine_hash text, ADD COLUMN logic_version text;
      UPDATE ${s}.executions e SET
        logic_version = r.body::json->>'version',
        machine_hash = COALESCE(r.body::json->>'machineHash', h.body::json->>'machineHash')
      FROM (
        SELECT DISTINCT ON (execution_id) execution_id, body FROM ${s}.records
        WHERE (body LIKE '%"loom.execution.started"%' OR body LIKE '%"loom.execution.migrated"%')
          AND body::json->>'type' IN ('loom.execution.started', 'loom.execution.migrated')
        ORDER BY execution_id, seq DESC
      ) r
      LEFT JOIN LATERAL (
        SELECT body FROM ${s}.records h
        WHERE h.execution_id = r.execution_id
          AND (h.body LIKE '%"loom.execution.started"%' OR h.body LIKE '%"loom.execution.migrated"%')
          AND h.body::json->>'type' IN ('loom.execution.started', 'loom.execution.migrated')
          AND h.body::json->>'machineHash' IS NOT NULL
        ORDER BY h.seq DESC LIMIT 1
      ) h ON true
      WHERE e.execution_id = r.execution_id;`,
  },
  {
    version: 4,
    name: "the fleet parks an execution that waits only on its children",
    // ADR 0012 D9: a parked execution has no owner and `waiting_on` set (the child executions it waits on); it is
    // claimable again once one of them ended or a message is in its inbox. NULL: not parked.
    sql: (s) => `
      ALTER TABLE ${s}.fleet ADD COLUMN waiting_on text[] COLLATE "C";`,
  },
  {
    version: 5,
    name: "the catalogue links a child execution to its parent and root",
    // Rows of child executions started before: filled from their start record (seq 1) when it is still in the live
    // log and names a parent (ADR 0012); a start archived keeps NULL (ExecutionInfo then has no parentId or rootId).
    sql: (s) => `
      ALTER TABLE ${s}.executions ADD COLUMN parent_id text, ADD COLUMN root_id text;
      UPDATE ${s}.executions e SET
        parent_id = r.body::json->'parent'->>'executionId',
        root_id = r.body::json->>'root'
      FROM ${s}.records r
      WHERE r.execution_id = e.execution_id AND r.seq = 1 AND r.body LIKE '%"parent"%'
        AND r.body::json->>'type' = 'loom.execution.started' AND r.body::json->'parent'->>'executionId' IS NOT NULL;`,
  },
  {
    version: 6,
    name: "durable schedules",
    // loomwork/schedules: one row per schedule, its JSON in `body` (StoredSchedule); `revision` is the compare-and-set
    // every write names, `paused` and `next_at` are copied out of the body for the CLI and the due index.
    sql: (s) => `
      CREATE TABLE ${s}.schedules (
        schedule_id text COLLATE "C" PRIMARY KEY,
        revision bigint NOT NULL,
        paused boolean NOT NULL,
        next_at double precision,
        body text NOT NULL
      );
      CREATE INDEX schedules_due ON ${s}.schedules (next_at) WHERE NOT paused;`,
  },
  {
    version: 7,
    name: "the fleet: worker sessions (failover at session end) and queues",
    // A worker registers here from a dedicated connection that holds the session-level advisory lock
    // (hashtext('loomwork.workers.<schema>') & 2147483647, session_key) for the process's lifetime; a row whose lock
    // no session holds is a worker whose session ended (the process died), and its leases are given back at once.
    sql: (s) => `
      CREATE SEQUENCE ${s}.worker_sessions AS integer CYCLE;
      CREATE TABLE ${s}.workers (
        session_key integer PRIMARY KEY,
        worker_id text COLLATE "C" NOT NULL,
        registered_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX workers_worker ON ${s}.workers (worker_id);
      -- Queues (flow control): the limits the submitting app declared, by name; a queued execution's queue, key and
      -- priority; admitted_at, its first claim (its start, for the rate limit); slot, whether it holds one of its
      -- queue's slots (from its admission until it ended: cleared lazily, and never counted once it ended).
      CREATE TABLE ${s}.queues (
        name text COLLATE "C" PRIMARY KEY,
        concurrency integer,
        per_key integer,
        rate_limit integer,
        rate_period_ms integer,
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      ALTER TABLE ${s}.fleet ADD COLUMN queue text COLLATE "C", ADD COLUMN queue_key text COLLATE "C",
        ADD COLUMN priority integer NOT NULL DEFAULT 0, ADD COLUMN admitted_at timestamptz,
        ADD COLUMN slot boolean NOT NULL DEFAULT false;
      CREATE INDEX fleet_queue_waiting ON ${s}.fleet (queue, priority, submitted_at) WHERE queue IS NOT NULL AND admitted_at IS NULL;
      CREATE INDEX fleet_queue_slots ON ${s}.fleet (queue, queue_key) WHERE slot;
      CREATE INDEX fleet_queue_starts ON ${s}.fleet (queue, queue_key, admitted_at) WHERE admitted_at IS NOT NULL;`,
  },
  {
    version: 8,
    name: "stream items, trees by root",
    // What a worker streams of an execution, for app.stream in other processes (ADR 0019): never journaled, so
    // UNLOGGED (no WAL; emptied after a server crash, when a stream is rebuilt from the journal). An item's id orders
    // it in its execution's stream; publisher names the process (a second one re-runs a step the first left). An item is
    // its JSON text (jsonb refuses \\u0000).
    sql: (s) => `
      CREATE UNLOGGED TABLE ${s}.stream_items (
        id bigserial PRIMARY KEY,
        execution_id text COLLATE "C" NOT NULL,
        publisher text COLLATE "C" NOT NULL,
        item text NOT NULL,
        at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX stream_items_execution ON ${s}.stream_items (execution_id, id);
      CREATE INDEX stream_items_at ON ${s}.stream_items (at);
      -- A tree's executions by its root (EventStore.listTree: app.stream of a lead, a tree's quota, app.executions({ root })).
      CREATE INDEX executions_root ON ${s}.executions (root_id) WHERE root_id IS NOT NULL;`,
  },
];

/** The newest schema version this loomwork knows. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;
