// What is particular to the PostgreSQL stores: versioned migrations at open, a user's own pool, one round
// trip per append, the catalogue's indexes, the notification of an end, and refusals.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  postgresStores,
  SCHEMA_VERSION,
  SchemaVersionError,
  PostgresStoresClosedError,
} from "../../adapters/postgres/index.js";
import { MIGRATIONS } from "../../adapters/postgres/migrations.js";
import { EXECUTION_ENDED } from "../../stores/schema.js";
import { ConcurrencyError } from "../../stores/errors.js";
import { started, step } from "../conformance/suite.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

/** A pool that counts the queries sent through it. */
function countingPool(url: string): { pool: pg.Pool; count: () => number } {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  let queries = 0;
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((...args: unknown[]) => (queries++, original(...args))) as typeof pool.query;
  return { pool, count: () => queries };
}

describe("postgresStores", () => {
  it("applies every migration once at open, in order, also when several processes open at once", async () => {
    const schema = freshSchema("mig");
    const opened = await Promise.all([1, 2, 3, 4].map(() => postgresStores({ url: server.url, schema })));
    try {
      const { rows } = await opened[0]!.db.query<{ version: number; name: string }>(
        `SELECT version, name FROM "${schema}".schema_migrations ORDER BY version`,
      );
      expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
      expect(await opened[0]!.db.version()).toBe(SCHEMA_VERSION);
      // Reopening applies nothing more.
      const again = await postgresStores({ url: server.url, schema });
      expect((await again.db.query(`SELECT 1 FROM "${schema}".schema_migrations`)).rowCount).toBe(MIGRATIONS.length);
      await again.close();
    } finally {
      for (const stores of opened) await stores.close();
      await dropSchema(server.url, schema);
    }
  });

  it("refuses a schema a newer loomwork migrated (SchemaVersionError), before writing anything", async () => {
    const schema = freshSchema("newer");
    const first = await postgresStores({ url: server.url, schema });
    await first.db.query(`INSERT INTO "${schema}".schema_migrations (version, name) VALUES ($1, 'from the future')`, [
      SCHEMA_VERSION + 1,
    ]);
    await first.close();
    const error = await postgresStores({ url: server.url, schema }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaVersionError);
    expect(error).toMatchObject({ found: SCHEMA_VERSION + 1, known: SCHEMA_VERSION, code: "LOOM_PG_SCHEMA_VERSION" });
    await dropSchema(server.url, schema);
  });

  it("takes a pool of yours, leaves it open at close, and sends one query per append", async () => {
    const schema = freshSchema("pool");
    const { pool, count } = countingPool(server.url);
    const stores = await postgresStores({ pool, schema });
    try {
      const before = count();
      await stores.events.append("e", 0, [started(1), step(2), step(3)]);
      await stores.events.append("e", 3, [step(4)]);
      await stores.events.append("e", 4, [{ seq: 5, at: 9, type: EXECUTION_ENDED, status: "done", output: 1 }]);
      expect(count() - before).toBe(3);
      await stores.close();
      expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      await expect(stores.events.head("e")).rejects.toBeInstanceOf(PostgresStoresClosedError);
    } finally {
      await pool.end();
      await dropSchema(server.url, schema);
    }
  });

  it("sends the append as a named prepared statement (one per schema), or as plain text with preparedStatements: false; both journal the same", async () => {
    const logs: unknown[][] = [];
    for (const preparedStatements of [true, false]) {
      const schema = freshSchema("prep");
      const pool = new pg.Pool({ connectionString: server.url, max: 1 });
      const sent: unknown[] = [];
      const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
      pool.query = ((...args: unknown[]) => (sent.push(args[0]), original(...args))) as typeof pool.query;
      const stores = await postgresStores({ pool, schema, preparedStatements });
      try {
        sent.length = 0;
        await stores.events.append("e", 0, [started(1), step(2)]);
        await stores.events.append("e", 2, [step(3)]);
        await expect(stores.events.append("e", 2, [step(3)])).rejects.toBeInstanceOf(ConcurrencyError);
        const appends = sent.filter((q) =>
          (typeof q === "string" ? q : (q as { text: string }).text).includes("WITH fence AS"),
        );
        expect(appends).toHaveLength(3);
        for (const q of appends)
          expect(typeof q === "string" ? undefined : (q as { name?: string }).name).toBe(
            preparedStatements ? `lw_append_${schema}` : undefined,
          );
        logs.push(await stores.events.read("e"));
        expect(await stores.events.getExecution("e")).toMatchObject({ head: 3, machineHash: "h" });
      } finally {
        await stores.close();
        await pool.end();
        await dropSchema(server.url, schema);
      }
    }
    expect(logs[0]).toEqual(logs[1]);
  });

  it("indexes the catalogue by id, subject, status and tree root, and lists a subject's executions by its index", async () => {
    const schema = freshSchema("idx");
    const stores = await postgresStores({ url: server.url, schema });
    try {
      const { rows } = await stores.db.query<{ indexname: string }>(
        `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'executions' ORDER BY indexname`,
        [schema],
      );
      expect(rows.map((r) => r.indexname)).toEqual([
        "executions_pkey",
        "executions_root",
        "executions_status",
        "executions_subject",
      ]);
      await stores.events.append("b", 0, [started(1, "s1")]);
      await stores.events.append("a", 0, [started(1, "s1")]);
      await stores.events.append("c", 0, [started(1, "s2")]);
      expect((await stores.events.listExecutionsOf("s1")).map((e) => e.executionId)).toEqual(["a", "b"]);
    } finally {
      await stores.close();
      await dropSchema(server.url, schema);
    }
  });

  it("refuses an unsafe schema name and a call without url or pool", async () => {
    await expect(postgresStores({ url: server.url, schema: 'x"; DROP TABLE y; --' })).rejects.toMatchObject({
      name: "ConfigError",
      path: "postgresStores.schema",
    });
    await expect(postgresStores({})).rejects.toMatchObject({ name: "ConfigError", path: "postgresStores" });
  });

  it("stores records byte for byte, NUL characters and key order included", async () => {
    const schema = freshSchema("bytes");
    const stores = await postgresStores({ url: server.url, schema });
    try {
      const odd = {
        seq: 2,
        at: 3,
        type: "loom.step.completed",
        stepId: "s",
        effectId: "t",
        output: { z: 1, a: "nul\u0000 and \ud83e\udd89", m: [1.5, -0, 1e300] },
      };
      await stores.events.append("e", 0, [started(1), odd]);
      const [, back] = await stores.events.read("e");
      expect(JSON.stringify(back)).toBe(JSON.stringify(odd));
    } finally {
      await stores.close();
      await dropSchema(server.url, schema);
    }
  });
});
