// An app's own page mounting loomwork/devtools over its IndexedDB stores: the first load runs the kettle to a
// parallel state and starts an agent whose tool call waits for approval; a reload resumes it and mounts the
// same page over the same stores, with no network needed.
import { mountDevtools } from "../../../adapters/devtools/index.js";
import { indexedDbStores } from "../../../adapters/indexeddb/index.js";
import { createApp, defineConfig } from "../../../index.js";
import { kettle, runKettle, tidy, tidyEffects } from "../../devtools/machines.js";

const stores = await indexedDbStores({ name: "devtools-mounted" });
const app = createApp(defineConfig({ stores, effects: tidyEffects(), logics: [kettle, tidy] }));
await app.resumeUnfinished();
if (!(await stores.events.getExecution("kettle-1"))) {
  await runKettle(app, "kettle-1");
  await app.start(tidy, { executionId: "tidy-1", input: { prompt: "Archive the paid invoices." } });
}
const devtools = mountDevtools(document.getElementById("devtools")!, {
  stores,
  logics: [kettle, tidy],
  app,
  pollMs: 250,
  executionId: "kettle-1",
  title: "My app's machines",
});
Object.assign(window, { devtools, loomReady: true });
