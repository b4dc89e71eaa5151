// The PostgreSQL adapter against the shared conformance suite, on a real server: a throwaway cluster the
// suite starts (spec/postgres/server.ts), or LOOMWORK_PG_URL. Every open is a fresh schema.
import { afterAll, beforeAll } from "vitest";
import { startPostgres, type PgServer } from "../postgres/server.js";
import { postgresHarness } from "../support/adapterHarness.js";
import { describeStoresConformance } from "./suite.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

describeStoresConformance("postgresStores", postgresHarness(() => server.url));
