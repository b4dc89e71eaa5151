// Erasure on PostgreSQL read at the lowest level: every row of every table dumped raw (bytea as hex), as a
// database dump would hold it. The claim-check, sweep and erasure behaviours themselves run on every adapter
// (spec/conformance/, postgres.test.ts among them).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresStores, type PostgresStores } from "../../adapters/postgres/index.js";
import { canaryOf, everything, offloaded, runAgent, world, type WorldOptions } from "../lifecycle/support.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";
import { eraseSubject, exportSubject } from "../../lifecycle.js";

let server: PgServer;
const opened: { stores: PostgresStores; schema: string }[] = [];
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  for (const { stores, schema } of opened) {
    await stores.close();
    await dropSchema(server.url, schema);
  }
  await server?.dispose();
});

async function pgWorld(options: WorldOptions = {}) {
  const schema = freshSchema("life");
  const stores = await postgresStores({ url: server.url, schema });
  opened.push({ stores, schema });
  return { w: world({ ...options, stores }), stores, schema };
}

/** Every row of every table of the schema as PostgreSQL prints it (bytea as hex): what a dump would hold. */
async function rawDump(stores: PostgresStores, schema: string): Promise<string> {
  const { rows } = await stores.db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = $1`,
    [schema],
  );
  const parts: string[] = [];
  for (const { table_name } of rows) {
    const dump = await stores.db.query<{ row: string }>(`SELECT t::text AS row FROM "${schema}"."${table_name}" t`);
    parts.push(...dump.rows.map((r) => r.row));
  }
  return parts.join("\n");
}
const hexOf = (text: string) => Buffer.from(text, "utf8").toString("hex");

describe("erasure on PostgreSQL, rows dumped raw", () => {
  it("erasure (sealed): the subject's key is shredded and no plaintext canary is anywhere in the database, rows dumped raw", async () => {
    const { w, stores, schema } = await pgWorld({ crypto: true });
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    await runAgent(app, "b1", "B", ["fetch"]);
    const { fetch } = await offloaded(app, "a1");
    expect(await rawDump(stores, schema)).not.toContain(canaryOf("A")); // sealed at rest from the start
    await eraseSubject(app, "A");
    expect(await stores.keys.isDestroyed("A")).toBe(true);
    expect(await w.content.has(fetch!)).toBe(false);
    const dump = await rawDump(stores, schema);
    expect(dump).not.toContain(canaryOf("A"));
    expect(dump).not.toContain(hexOf(canaryOf("A")));
    expect(await everything(stores)).not.toContain(canaryOf("A"));
    expect((await exportSubject(app, "B")).claimChecked.every((blob) => blob.value !== undefined)).toBe(true);
    expect((await eraseSubject(app, "A")).contentDeleted).toEqual({ deleted: 0, retained: 0 });
    await app.close();
  });

  it("erasure (plaintext): the subject's histories are deleted whole; another subject's stay", async () => {
    const { w, stores, schema } = await pgWorld();
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    await runAgent(app, "b1", "B", ["fetch"]);
    expect((await eraseSubject(app, "A")).historiesDeleted).toEqual(["a1"]);
    expect(await stores.events.getExecution("a1")).toBeUndefined();
    expect(await stores.events.getExecution("b1")).toBeDefined();
    const dump = await rawDump(stores, schema);
    expect(dump).not.toContain(canaryOf("A"));
    expect(dump).not.toContain(hexOf(canaryOf("A")));
    expect(dump).toContain(hexOf(canaryOf("B")));
    await app.close();
  });
});
