// The claim-check, sweep and erasure on PostgreSQL stores: the lifecycle suites' world
// (spec/lifecycle/support.ts) over a real server, each test in a fresh schema.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { simulatedClock } from "../../actors/clock.js";
import { postgresStores, type PostgresStores } from "../../adapters/postgres/index.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import { canaryOf, everything, offloaded, runAgent, world, type WorldOptions } from "../lifecycle/support.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

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
  const { rows } = await stores.db.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1`, [schema]);
  const parts: string[] = [];
  for (const { table_name } of rows) {
    const dump = await stores.db.query<{ row: string }>(`SELECT t::text AS row FROM "${schema}"."${table_name}" t`);
    parts.push(...dump.rows.map((r) => r.row));
  }
  return parts.join("\n");
}
const hexOf = (text: string) => Buffer.from(text, "utf8").toString("hex");

describe("claim-check, sweep and erasure on PostgreSQL", () => {
  it("claim-check: an over-cap tool result is offloaded to the blob table and resolved from it; the journal holds the envelope", async () => {
    const { w } = await pgWorld();
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch", "shared"]);
    const refs = await offloaded(app, "a1");
    expect(Object.keys(refs).sort()).toEqual(["fetch", "shared"]);
    for (const address of Object.values(refs)) expect(await w.content.has(address)).toBe(true);
    const record = (await app.log("a1")).find((r) => r.type === STEP_COMPLETED && r.effectId === "fetch")!;
    expect(record.output).toMatchObject({ __loomClaimCheck: 1 });
    expect(JSON.stringify(record.output)).not.toContain("fetch A row 39");
    expect(await app.resolveClaimCheck(record.output, { subject: "A" })).toMatchObject({ owner: "A", canary: canaryOf("A") });
    await app.close();
  });

  it("sweep: a telemetry blob is reclaimed with the conditional delete once its TTL passed; a cited retained one is kept", async () => {
    const clock = simulatedClock(1_000);
    const { w } = await pgWorld({ clock, snapshotEvery: false });
    const app = w.app();
    await runAgent(app, "t1", "A", ["telemetry"]);
    await runAgent(app, "f1", "A", ["fetch"]);
    const { telemetry } = await offloaded(app, "t1");
    const { fetch } = await offloaded(app, "f1");
    clock.advance(200);
    expect((await app.sweep({ ttlMs: 300 })).deleted).toBe(0);
    clock.advance(200);
    const result = await app.sweep({ ttlMs: 300 });
    expect(result.deleted).toBe(1);
    expect(await w.content.has(telemetry!)).toBe(false);
    expect(await w.content.has(fetch!)).toBe(true);
    await app.close();
  });

  it("erasure (sealed): the subject's key is shredded and no plaintext canary is anywhere in the database, rows dumped raw", async () => {
    const { w, stores, schema } = await pgWorld({ crypto: true });
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    await runAgent(app, "b1", "B", ["fetch"]);
    const { fetch } = await offloaded(app, "a1");
    expect(await rawDump(stores, schema)).not.toContain(canaryOf("A")); // sealed at rest from the start
    await app.eraseSubject("A");
    expect(await stores.keys.isDestroyed("A")).toBe(true);
    expect(await w.content.has(fetch!)).toBe(false);
    const dump = await rawDump(stores, schema);
    expect(dump).not.toContain(canaryOf("A"));
    expect(dump).not.toContain(hexOf(canaryOf("A")));
    expect(await everything(stores)).not.toContain(canaryOf("A"));
    expect((await app.exportSubject("B")).claimChecked.every((blob) => blob.value !== undefined)).toBe(true);
    expect((await app.eraseSubject("A")).contentDeleted).toEqual({ deleted: 0, retained: 0 });
    await app.close();
  });

  it("erasure (plaintext): the subject's histories are deleted whole; another subject's stay", async () => {
    const { w, stores, schema } = await pgWorld();
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    await runAgent(app, "b1", "B", ["fetch"]);
    expect((await app.eraseSubject("A")).historiesDeleted).toEqual(["a1"]);
    expect(await stores.events.getExecution("a1")).toBeUndefined();
    expect(await stores.events.getExecution("b1")).toBeDefined();
    const dump = await rawDump(stores, schema);
    expect(dump).not.toContain(canaryOf("A"));
    expect(dump).not.toContain(hexOf(canaryOf("A")));
    expect(dump).toContain(hexOf(canaryOf("B")));
    await app.close();
  });
});
