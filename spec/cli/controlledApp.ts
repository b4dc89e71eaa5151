// An app in a process of its own for the crash test: it holds the journal in LOOMWORK_DIR, serves the
// control socket, starts gate-1 and gate-2, prints "ready" and runs until it is killed.
import { fsStores, serveControl } from "../../adapters/fs/index.js";
import { createApp, createToolEffect, defineConfig } from "../../index.js";
import { gate } from "./operateMachines.js";

const stores = await fsStores({ dir: process.env.LOOMWORK_DIR! });
const app = createApp(
  defineConfig({
    stores,
    logics: [gate],
    effects: { work: createToolEffect(async ({ text }: { text: string }) => `worked on ${text}`) },
  }),
);
await serveControl(app, { dir: stores.dir });
for (const executionId of ["gate-1", "gate-2"]) await app.start(gate, { executionId, input: {} });
process.stdout.write("ready\n");
setInterval(() => undefined, 60_000);
