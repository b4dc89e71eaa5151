// The PostgreSQL adapter against the shared conformance suite, then the agent, claim-check, sweep and
// erasure suites, on a real server: one throwaway cluster for the file (spec/postgres/server.ts), or
// LOOMWORK_PG_URL. Every open is a fresh schema.
import { afterAll, beforeAll } from "vitest";
import { startPostgres, type PgServer } from "../postgres/server.js";
import { postgresHarness } from "../support/adapterHarness.js";
import { describeAdapterSuites } from "./adapterSuites.js";
import { describeStoresConformance } from "./suite.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

describeStoresConformance(
  "postgresStores",
  postgresHarness(() => server.url),
);
describeAdapterSuites(
  "postgresStores",
  postgresHarness(() => server.url),
);
