// The PostgreSQL adapter against the shared conformance suite, on a real server: a throwaway cluster the
// suite starts (spec/postgres/server.ts), or LOOMWORK_PG_URL. Every open is a fresh schema.
import { afterAll, beforeAll } from "vitest";
import { postgresStores, type PostgresStores } from "../../adapters/postgres/index.js";
import type { Stores } from "../../stores/types.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "../postgres/server.js";
import { describeStoresConformance } from "./suite.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

const schemas = new WeakMap<Stores, string>();
const openAt = async (schema: string): Promise<Stores> => {
  const stores = await postgresStores({ url: server.url, schema });
  schemas.set(stores, schema);
  return stores;
};

describeStoresConformance("postgresStores", {
  open: () => openAt(freshSchema("conf")),
  reopen: async (previous) => {
    await (previous as PostgresStores).close();
    return openAt(schemas.get(previous)!);
  },
  cleanup: async (stores) => {
    await (stores as PostgresStores).close();
    await dropSchema(server.url, schemas.get(stores)!);
  },
});
