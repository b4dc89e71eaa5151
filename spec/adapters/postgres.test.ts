// The agent, claim-check, sweep and erasure suites on postgresStores: one throwaway cluster for the file
// (spec/postgres/server.ts, or LOOMWORK_PG_URL), a fresh schema per test.
import { afterAll, beforeAll } from "vitest";
import { startPostgres, type PgServer } from "../postgres/server.js";
import { postgresHarness } from "../support/adapterHarness.js";
import { describeAdapterSuites } from "./suites.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

describeAdapterSuites("postgresStores", postgresHarness(() => server.url));
