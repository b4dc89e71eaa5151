// app.submit on a real server: a resubmit with the same logic, subject and input is a no-op; with another
// one it is a SubmitConflictError naming what differs and writes nothing (also when both submits race);
// an id this app runs itself (app.start, app.resume) is refused before anything is queued for the fleet.
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { setup } from "xstate";
import { createApp, type App } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { postgresStores, type PostgresStores } from "../../adapters/postgres/index.js";
import { effectActor } from "../../machines/helpers/effectActor.js";
import { memoryStores } from "../../stores/memory.js";
import type { FleetPort, JournalRecord } from "../../stores/types.js";
import { demoMachine } from "../support/demoMachine.js";
import { countedDemoEffects } from "../support/harness.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

// The demo machine's id with another definition: a new version of the same logic.
const demoChanged = setup({ actors: { research: effectActor() } }).createMachine({
  id: "demo",
  initial: "researching",
  states: { researching: { invoke: { src: "research", id: "research", onDone: "done" } }, done: { type: "final" } },
});

/** An app over stores on a schema of its own; it registers the demo effects so it can also run executions itself. */
async function submitter(): Promise<{ app: App; stores: PostgresStores; close(): Promise<void> }> {
  const schema = freshSchema("submit");
  const stores = await postgresStores({ url: server.url, schema, pollMs: 100 });
  const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
  return {
    app,
    stores,
    async close() {
      await app.close();
      await stores.close();
      await dropSchema(server.url, schema);
    },
  };
}

const withoutTime = (log: JournalRecord[]) => log.map(({ at: _at, ...rest }) => rest);

describe("app.submit of an id that has a log", () => {
  it("is a no-op with the same logic, subject and input (keys in any order); with another one, a SubmitConflictError naming it, and nothing written", async () => {
    const s = await submitter();
    try {
      const input = { topic: "owls", extra: { b: 1, a: [1, { y: 2, x: 1 }] } };
      await s.app.submit(demoMachine, { executionId: "d1", subject: "user-1", input });
      const before = await s.app.log("d1");
      await s.app.submit(demoMachine, {
        executionId: "d1",
        subject: "user-1",
        input: { extra: { a: [1, { x: 1, y: 2 }], b: 1 }, topic: "owls" },
      });

      const conflicts: [string, () => Promise<void>, string][] = [
        ["subject", () => s.app.submit(demoMachine, { executionId: "d1", subject: "user-2", input }), "subject"],
        ["no subject", () => s.app.submit(demoMachine, { executionId: "d1", input }), "subject"],
        [
          "input",
          () =>
            s.app.submit(demoMachine, { executionId: "d1", subject: "user-1", input: { ...input, topic: "moths" } }),
          "input",
        ],
        [
          "nested input",
          () =>
            s.app.submit(demoMachine, {
              executionId: "d1",
              subject: "user-1",
              input: { ...input, extra: { b: 1, a: [1, { y: 2 }] } },
            }),
          "input",
        ],
        ["logic", () => s.app.submit(demoChanged, { executionId: "d1", subject: "user-1", input }), "logic"],
      ];
      for (const [what, submitted, field] of conflicts) {
        const error = await submitted().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, what).toMatchObject({
          name: "SubmitConflictError",
          code: "LOOM_SUBMIT_CONFLICT",
          executionId: "d1",
          field,
        });
        expect((error as Error).message, what).toContain(`"d1"`);
      }
      const nested = await conflicts[3]![1]().catch((e: unknown) => e);
      expect((nested as Error).message, "the message names the path that differs").toContain("input.extra.a[1].x");
      expect(withoutTime(await s.app.log("d1"))).toEqual(withoutTime(before));
    } finally {
      await s.close();
    }
  }, 60_000);

  it("two apps submit one id at once: with different inputs, one journals its start and the other gets SubmitConflictError; the same submit twice in one app, both succeed", async () => {
    const s = await submitter();
    // A second submitter, as another process would be: its own connections to the same schema.
    const otherStores = await postgresStores({ url: server.url, schema: s.stores.schema, pollMs: 100 });
    const other = createApp(defineConfig({ stores: otherStores, effects: {} }));
    try {
      for (let round = 0; round < 5; round++) {
        const id = `race-${round}`;
        const settled = await Promise.allSettled([
          s.app.submit(demoMachine, { executionId: id, input: { topic: "a" } }),
          other.submit(demoMachine, { executionId: id, input: { topic: "b" } }),
        ]);
        expect(
          settled.filter((r) => r.status === "fulfilled"),
          id,
        ).toHaveLength(1);
        const loser = settled.findIndex((r) => r.status === "rejected");
        expect((settled[loser] as PromiseRejectedResult).reason, id).toMatchObject({
          code: "LOOM_SUBMIT_CONFLICT",
          field: "input",
        });
        const log = await s.app.log(id);
        expect(log[0], id).toMatchObject({ type: "loom.execution.started", input: { topic: loser === 0 ? "b" : "a" } });
        expect(
          log.filter((r) => r.type === "loom.execution.started"),
          id,
        ).toHaveLength(1);
      }
      const same = () => s.app.submit(demoMachine, { executionId: "twice", input: { topic: "a" } });
      await Promise.all([same(), same()]);
      expect((await s.app.log("twice")).filter((r) => r.type === "loom.execution.started")).toHaveLength(1);
    } finally {
      await other.close();
      await otherStores.close();
      await s.close();
    }
  }, 60_000);
});

describe("app.submit of an id this app runs", () => {
  it("is refused with SubmitConflictError (a second runner), before anything is queued for the fleet: after app.start, during it, and after app.resume", async () => {
    const s = await submitter();
    try {
      const input = { topic: "owls" };
      const actor = await s.app.start(demoMachine, { executionId: "local-1", input });
      await actor.settled();
      await expect(s.app.submit(demoMachine, { executionId: "local-1", input })).rejects.toMatchObject({
        code: "LOOM_SUBMIT_CONFLICT",
        field: "runner",
        executionId: "local-1",
      });
      expect(await s.stores.fleet.isSubmitted("local-1")).toBe(false);

      // While the start is under way (nothing journaled yet).
      const starting = s.app.start(demoMachine, { executionId: "local-2", input });
      await expect(s.app.submit(demoMachine, { executionId: "local-2", input })).rejects.toMatchObject({
        code: "LOOM_SUBMIT_CONFLICT",
        field: "runner",
      });
      await (await starting).settled();
      expect(await s.stores.fleet.isSubmitted("local-2")).toBe(false);

      // Resumed by another app over the same stores.
      const other = createApp(
        defineConfig({ stores: s.stores, effects: countedDemoEffects().effects, logics: [demoMachine] }),
      );
      await s.app.close();
      const resumed = await other.resume("local-1");
      await resumed.settled();
      await expect(other.submit(demoMachine, { executionId: "local-1", input })).rejects.toMatchObject({
        code: "LOOM_SUBMIT_CONFLICT",
        field: "runner",
      });
      expect(await s.stores.fleet.isSubmitted("local-1")).toBe(false);
      await other.close();
    } finally {
      await s.close();
    }
  }, 60_000);

  it("an id that is not well-formed UTF-16 is refused with MalformedIdError, and nothing is written", async () => {
    const s = await submitter();
    try {
      await s.app.submit(demoMachine, { executionId: "a\ufffd", input: { topic: "t" } });
      await expect(s.app.submit(demoMachine, { executionId: "a\ud800", input: { topic: "u" } })).rejects.toMatchObject({
        name: "MalformedIdError",
        code: "LOOM_MALFORMED_ID",
      });
      expect((await s.stores.events.listExecutions()).map((e) => e.executionId)).toEqual(["a\ufffd"]);
      expect((await s.app.log("a\ufffd"))[0]).toMatchObject({ input: { topic: "t" } });
    } finally {
      await s.close();
    }
  }, 60_000);
});

describe("the fleet port (Stores.fleet)", () => {
  it("is declared on Stores and PostgresStores has one; over stores without it app.submit is a ConfigError naming stores, and nothing is written", async () => {
    expectTypeOf<PostgresStores["fleet"]>().toMatchTypeOf<FleetPort>();
    const stores = memoryStores();
    expect(stores.fleet).toBeUndefined();
    const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
    try {
      await expect(app.submit(demoMachine, { executionId: "here", input: { topic: "t" } })).rejects.toMatchObject({
        name: "ConfigError",
        path: "stores",
      });
      expect(await stores.events.listExecutions()).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
