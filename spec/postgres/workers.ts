// A fleet for the children tests on the throwaway cluster: `workers` createWorker apps in this process over one fresh
// schema, and a submitting app over its own connection; close() stops them and drops the schema.
import type { AnyStateMachine } from "xstate";
import { createApp } from "../../actors/app.js";
import { defineConfig, type LoomConfig } from "../../actors/config.js";
import type { Effect } from "../../actors/effects/effect.js";
import { createWorker, postgresStores, type PostgresStores, type Worker } from "../../adapters/postgres/index.js";
import { dropSchema, freshSchema, type PgServer } from "./server.js";

export interface FleetOptions {
  name: string;
  workers: number;
  logics: AnyStateMachine[];
  effects: Record<string, Effect>;
  concurrency?: number;
  /** The submitter's queues (defineConfig({ queues })). */
  queues?: LoomConfig["queues"];
}

export async function startFleet(server: PgServer, options: FleetOptions) {
  const schema = freshSchema(options.name);
  const open = () => postgresStores({ url: server.url, schema, pollMs: 100 });
  const all: PostgresStores[] = [];
  const running: Worker[] = [];
  for (let n = 0; n < options.workers; n++) {
    const stores = await open();
    all.push(stores);
    running.push(
      await createWorker({
        stores,
        logics: options.logics,
        effects: options.effects,
        concurrency: options.concurrency ?? 4,
        leaseMs: 2_000,
        pollMs: 100,
        drainMs: 5_000,
        signals: [],
      }),
    );
  }
  const submitter = await open();
  all.push(submitter);
  const app = createApp(
    defineConfig({ stores: submitter, effects: {}, ...(options.queues ? { queues: options.queues } : {}) }),
  );
  return {
    app,
    schema,
    submitter,
    workers: running,
    async close() {
      for (const worker of running) await worker.stop();
      await app.close();
      for (const stores of all) await stores.close();
      await dropSchema(server.url, schema);
    },
  };
}
