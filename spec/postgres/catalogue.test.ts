// The Postgres catalogue keeps the logic version and machine hash (migration 3), as every adapter's
// catalogue does: a migrated execution resumed from Postgres runs the version it was moved to. A schema a
// loomwork of migration level 2 made (no such columns) migrates at open, fills them from the log, and reads; one of level
// 3 gets a child execution's parent and root (migration 5).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { postgresStores, SCHEMA_VERSION } from "../../adapters/postgres/index.js";
import { MIGRATIONS } from "../../adapters/postgres/migrations.js";
import { memoryStores } from "../../stores/memory.js";
import type { ExecutionInfo, Stores } from "../../stores/types.js";
import { countedEffects, flow } from "../upgrades/support.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";
import { migrate } from "../../upgrades.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { parent } from "../children/machines.js";

let server: PgServer;
const schemas: string[] = [];
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  for (const schema of schemas) await dropSchema(server.url, schema);
  await server?.dispose();
});

const v1 = flow({ version: "1" });
const v2 = flow({ version: "2", shape: "review" });
const mapTrail = {
  migrate: ({ value, context, version }: { value: unknown; context: unknown; version?: string }) => ({
    value,
    context: { trail: [...(context as { trail: string[] }).trail, `from ${version}`] },
  }),
} as never;

/** Parks `executionId` on v1 (waiting for CONTINUE); with `migrate`, then moves it to v2. */
async function prepare(stores: Stores, executionId: string, move: boolean): Promise<void> {
  const { effects } = countedEffects();
  const first = createApp(defineConfig({ stores, effects }));
  await (await first.start(v1, { executionId, input: { name: executionId } })).settled();
  await first.close();
  if (!move) return;
  const app = createApp(defineConfig({ stores, effects, logics: [v1, v2] }));
  await migrate(app, executionId, v2, mapTrail);
  await app.close();
}

/** Resumes `executionId` in an app holding both versions and runs it to its end; the trail says which version ran. */
async function finish(stores: Stores, executionId: string): Promise<unknown> {
  const counted = countedEffects();
  const app = createApp(defineConfig({ stores, effects: counted.effects, logics: [v1, v2] }));
  const actor = await app.resume(executionId);
  await actor.sendAsync({ type: "CONTINUE" });
  await actor.settled();
  await actor.sendAsync({ type: "CLOSE" });
  const output = await app.result(executionId);
  await app.close();
  return output;
}

const catalogueFields = (info: ExecutionInfo | undefined) => ({
  logicId: info?.logicId,
  machineHash: info?.machineHash,
  version: info?.version,
});

async function openFresh(tag: string) {
  const schema = freshSchema(tag);
  schemas.push(schema);
  return { schema, stores: await postgresStores({ url: server.url, schema }) };
}

describe("the Postgres catalogue keeps the logic version and machine hash", () => {
  it("names the version and hash a start and a migration recorded, as memory stores do; the migrated execution resumes on v2", async () => {
    const memory = memoryStores();
    const { stores } = await openFresh("cat");
    for (const s of [memory, stores]) {
      await prepare(s, "parked", false);
      await prepare(s, "moved", true);
    }
    for (const id of ["parked", "moved"])
      expect(catalogueFields(await stores.events.getExecution(id))).toEqual(
        catalogueFields(await memory.events.getExecution(id)),
      );
    expect(await stores.events.getExecution("parked")).toMatchObject({
      logicId: "flow",
      version: "1",
      machineHash: expect.any(String),
    });
    const moved = await stores.events.getExecution("moved");
    expect(moved).toMatchObject({ version: "2" });
    expect(moved!.machineHash).not.toBe((await stores.events.getExecution("parked"))!.machineHash);
    expect((await stores.events.listExecutions()).find((e) => e.executionId === "moved")).toMatchObject({
      version: "2",
      machineHash: moved!.machineHash,
    });
    // A fresh app holding both versions picks each execution's own from the catalogue.
    expect(await finish(stores, "moved")).toEqual({
      trail: ["moved", "done:prepare", "from 1", "done:review", "done:finish"],
    });
    expect(await finish(stores, "parked")).toEqual({ trail: ["parked", "done:prepare", "done:finish"] });
    await stores.close();
  });

  it("a schema made at migration level 2 migrates to the current level at open, fills the columns from the log, and reads", async () => {
    expect(SCHEMA_VERSION).toBe(8);
    // What a loomwork of level 2 left: its two migrations, and the rows its append wrote (no hash, no version).
    const schema = freshSchema("lvl2");
    schemas.push(schema);
    const s = `"${schema}"`;
    const memory = memoryStores();
    await prepare(memory, "parked", false);
    await prepare(memory, "moved", true);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await client.query(
        `CREATE SCHEMA ${s}; CREATE TABLE ${s}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      for (const m of MIGRATIONS.filter((m) => m.version <= 2)) {
        await client.query(m.sql(s));
        await client.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      }
      for (const id of ["parked", "moved"]) {
        const info = (await memory.events.getExecution(id))!;
        await client.query(
          `INSERT INTO ${s}.executions (execution_id, subject, logic_id, status, started_at, ended_at, head) VALUES ($1, NULL, $2, $3, $4, NULL, $5)`,
          [id, info.logicId, info.status, info.startedAt, info.head],
        );
        for (const record of await memory.events.read(id))
          await client.query(`INSERT INTO ${s}.records (execution_id, seq, body) VALUES ($1, $2, $3)`, [
            id,
            record.seq,
            JSON.stringify(record),
          ]);
      }
    } finally {
      await client.end();
    }

    const stores = await postgresStores({ url: server.url, schema });
    expect(await stores.db.version()).toBe(SCHEMA_VERSION);
    for (const id of ["parked", "moved"])
      expect(catalogueFields(await stores.events.getExecution(id))).toEqual(
        catalogueFields(await memory.events.getExecution(id)),
      );
    expect(await stores.events.getExecution("moved")).toMatchObject({ version: "2" });
    expect(await stores.events.read("moved")).toEqual(await memory.events.read("moved"));
    expect(await finish(stores, "moved")).toEqual({
      trail: ["moved", "done:prepare", "from 1", "done:review", "done:finish"],
    });
    expect(await finish(stores, "parked")).toEqual({ trail: ["parked", "done:prepare", "done:finish"] });
    // After the upgrade, appends keep the columns as a level-3 schema does: the end moved nothing of them.
    expect(await stores.events.getExecution("moved")).toMatchObject({ status: "done", version: "2" });
    await stores.close();
  });

  it("a schema made at migration level 3 migrates to level 4: a child execution's row gets its parent and root from its start", async () => {
    const schema = freshSchema("lvl3");
    schemas.push(schema);
    const s = `"${schema}"`;
    const memory = memoryStores();
    const app = createApp(
      defineConfig({ stores: memory, effects: { double: createToolEffect(async (n: number) => n * 2) } }),
    );
    await app.start(parent, { executionId: "t" });
    await app.result("t");
    await app.close();
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await client.query(
        `CREATE SCHEMA ${s}; CREATE TABLE ${s}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      for (const m of MIGRATIONS.filter((m) => m.version <= 3)) {
        await client.query(m.sql(s));
        await client.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      }
      for (const id of ["t", "t/w"]) {
        const info = (await memory.events.getExecution(id))!;
        await client.query(
          `INSERT INTO ${s}.executions (execution_id, subject, logic_id, status, started_at, ended_at, head) VALUES ($1, NULL, $2, $3, $4, $5, $6)`,
          [id, info.logicId, info.status, info.startedAt, info.endedAt ?? null, info.head],
        );
        for (const record of await memory.events.read(id))
          await client.query(`INSERT INTO ${s}.records (execution_id, seq, body) VALUES ($1, $2, $3)`, [
            id,
            record.seq,
            JSON.stringify(record),
          ]);
      }
    } finally {
      await client.end();
    }
    const stores = await postgresStores({ url: server.url, schema });
    expect(await stores.db.version()).toBe(SCHEMA_VERSION);
    expect(await stores.events.getExecution("t/w")).toMatchObject({ parentId: "t", rootId: "t" });
    const root = await stores.events.getExecution("t");
    expect(root?.parentId).toBeUndefined();
    expect(root?.rootId).toBeUndefined();
    await stores.close();
  });
});
