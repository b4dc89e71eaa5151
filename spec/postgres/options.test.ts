// Bad options of postgresStores and createWorker: each refused with a ConfigError naming the option and
// showing the value, at once (before any connection is made or any lease claimed), writing nothing.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { ConfigError } from "../../actors/errors.js";
import {
  createWorker,
  postgresStores,
  type PostgresStores,
  type PostgresStoresOptions,
  type WorkerOptions,
} from "../../adapters/postgres/index.js";
import { memoryStores } from "../../stores/memory.js";
import { countedDemoEffects } from "../support/harness.js";
import { demoMachine } from "../support/demoMachine.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

let server: PgServer;
let stores: PostgresStores;
let schema: string;
beforeAll(async () => {
  server = await startPostgres();
  schema = freshSchema("opts");
  stores = await postgresStores({ url: server.url, schema });
  // A submitted execution no refused worker may claim.
  const app = createApp(defineConfig({ stores, effects: {} }));
  await app.submit(demoMachine, { executionId: "waiting", input: { topic: "owls" } });
  await app.close();
});
afterAll(async () => {
  await stores?.close();
  if (server) await dropSchema(server.url, schema);
  await server?.dispose();
});

// Long enough for any machine under load to refuse, far shorter than a hang (a pool of -1 waits forever).
const AT_ONCE_MS = 5_000;

/** What a call did within AT_ONCE_MS: refused (the error), accepted (then undone), or neither. */
async function outcome<T>(call: () => Promise<T>, undo: (value: T) => Promise<void>): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise((resolve) => (timer = setTimeout(() => resolve("no answer: it hangs"), AT_ONCE_MS)));
  const settled = Promise.resolve()
    .then(call)
    .then(
      async (value) => {
        await undo(value);
        return "accepted";
      },
      (error: unknown) => error,
    );
  try {
    return await Promise.race([settled, hang]);
  } finally {
    clearTimeout(timer);
  }
}

function expectRefused(result: unknown, path: string, shown: string): void {
  expect(result, `refused with a ConfigError naming ${path}`).toBeInstanceOf(ConfigError);
  const error = result as ConfigError;
  expect(error.path).toBe(path);
  expect(error.code).toBe("LOOM_CONFIG");
  expect(error.message).toContain(shown);
}

describe("postgresStores refuses bad options", () => {
  const cases: [string, unknown, string, string][] = [
    ["max: 0", { max: 0 }, "postgresStores.max", "0"],
    ['max: "ten"', { max: "ten" }, "postgresStores.max", '"ten"'],
    ["max: -1", { max: -1 }, "postgresStores.max", "-1"],
    ["pollMs: -5", { pollMs: -5 }, "postgresStores.pollMs", "-5"],
    ['preparedStatements: "no"', { preparedStatements: "no" }, "postgresStores.preparedStatements", '"no"'],
    ['url: "not a url"', { url: "not a url" }, "postgresStores.url", '"not a url"'],
    ['schema: "Bad-Name"', { schema: "Bad-Name" }, "postgresStores.schema", '"Bad-Name"'],
    ["a url and a pool", { pool: new pg.Pool() }, "postgresStores", "exactly one of url"],
    ["pool: {}", { url: undefined, pool: {} }, "postgresStores.pool", "pg.Pool"],
  ];

  it.each(cases)("%s: a ConfigError at once, no schema made", async (_, override, path, shown) => {
    const target = freshSchema("refused");
    const options = { url: server.url, schema: target, ...(override as object) } as PostgresStoresOptions;
    expectRefused(
      await outcome(
        () => postgresStores(options),
        (s) => s.close(),
      ),
      path,
      shown,
    );
    const { rows } = await stores.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1",
      [target],
    );
    expect(rows[0]!.n).toBe(0);
  });

  it("no options: a ConfigError, not a TypeError from inside", async () => {
    const call = postgresStores as unknown as () => Promise<PostgresStores>;
    expectRefused(await outcome(call, (s) => s.close()), "postgresStores", "postgresStores({ url })");
  });
});

describe("createWorker refuses bad options", () => {
  const base = (): WorkerOptions => ({
    stores,
    logics: [demoMachine],
    effects: countedDemoEffects().effects,
    signals: [],
    pollMs: 50,
  });
  const cases: [string, unknown, string, string][] = [
    ["concurrency: 1.5", { concurrency: 1.5 }, "createWorker.concurrency", "1.5"],
    ["concurrency: 0", { concurrency: 0 }, "createWorker.concurrency", "0"],
    ["leaseMs: NaN", { leaseMs: NaN }, "createWorker.leaseMs", "NaN"],
    ["pollMs: 0", { pollMs: 0 }, "createWorker.pollMs", "0"],
    ["drainMs: -1", { drainMs: -1 }, "createWorker.drainMs", "-1"],
    ["drainMs: NaN", { drainMs: NaN }, "createWorker.drainMs", "NaN"],
    ["sessionCheckMs: 0", { sessionCheckMs: 0 }, "createWorker.sessionCheckMs", "0"],
    ["sessionCheckMs: true", { sessionCheckMs: true }, "createWorker.sessionCheckMs", "true"],
    ['signals: "SIGTERM"', { signals: "SIGTERM" }, "createWorker.signals", '"SIGTERM"'],
    ['signals: ["SIGFOO"]', { signals: ["SIGFOO"] }, "createWorker.signals", '"SIGFOO"'],
    ['id: ""', { id: "" }, "createWorker.id", '""'],
    ["logics: []", { logics: [] }, "createWorker.logics", "[]"],
    ["effects: undefined", { effects: undefined }, "createWorker.effects", "undefined"],
    ["stores: memoryStores()", { stores: memoryStores() }, "createWorker.stores", "postgresStores"],
    ["onLeaseLost: true", { onLeaseLost: true }, "createWorker.onLeaseLost", "true"],
    ['app: "fast"', { app: "fast" }, "createWorker.app", '"fast"'],
    ["leaseMs: 1e12 (past the longest timer)", { leaseMs: 1e12 }, "createWorker.leaseMs", "1000000000000"],
  ];

  it.each(cases)(
    "%s: a ConfigError at once, nothing claimed, no signal handler left",
    async (_, override, path, shown) => {
      const listeners = process.listenerCount("SIGTERM");
      const options = { ...base(), ...(override as object) } as WorkerOptions;
      expectRefused(
        await outcome(
          () => createWorker(options),
          (w) => w.stop(),
        ),
        path,
        shown,
      );
      expect(process.listenerCount("SIGTERM")).toBe(listeners);
      const { rows } = await stores.db.query(`SELECT owner, epoch::int AS epoch FROM "${schema}".fleet`);
      expect(rows).toEqual([{ owner: null, epoch: 0 }]);
    },
  );

  it("no options: a ConfigError, not a TypeError from inside", async () => {
    const call = createWorker as unknown as () => Promise<Awaited<ReturnType<typeof createWorker>>>;
    expectRefused(await outcome(call, (w) => w.stop()), "createWorker", "createWorker({ stores");
  });
});
