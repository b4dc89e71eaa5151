// The minimal agent app the bundle row measures (bench/bundle.ts): an agentLoop$ on a model, stores on
// IndexedDB, one start. It imports what `loomwork` and `loomwork/indexeddb` export (the sources of both).
import { agentLoop$, createApp, createLlmEffect, defineConfig, scriptedModel } from "../../index.js";
import { indexedDbStores } from "../../adapters/indexeddb/index.js";

const loop = agentLoop$({ id: "minimal", model: "model" });
const stores = await indexedDbStores({ name: "minimal-app" });
const app = createApp(
  defineConfig({ stores, effects: { model: createLlmEffect(scriptedModel([{ text: "Hello." }])) } }),
);
await app.start(loop, { executionId: "run-1", input: { prompt: "Say hello." } });
console.log(await app.result("run-1"));
