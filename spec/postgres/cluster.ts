// The throwaway cluster of one PostgreSQL test file: started before its tests; after them, the schemas its tests
// made are dropped and it is stopped.
import { afterAll, beforeAll } from "vitest";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

export interface FileCluster {
  /** The running cluster (from the file's beforeAll on). */
  readonly server: PgServer;
  /** A fresh schema name, dropped after the file's tests. */
  schema(tag: string): string;
}

export function clusterForFile(): FileCluster {
  let server: PgServer | undefined;
  const schemas: string[] = [];
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    if (!server) return;
    for (const schema of schemas) await dropSchema(server.url, schema).catch(() => undefined);
    await server.dispose();
  });
  return {
    get server() {
      if (!server) throw new Error("the cluster starts in the file's beforeAll");
      return server;
    },
    schema(tag) {
      const schema = freshSchema(tag);
      schemas.push(schema);
      return schema;
    },
  };
}
