// The minimal app of bench/bundle/minimalApp.ts plus the live catalogue view (the one part on Dexie).
import { agentLoop$, createApp, createLlmEffect, defineConfig, scriptedModel } from "../../index.js";
import { indexedDbStores, watchExecutions } from "../../adapters/indexeddb/index.js";

const loop = agentLoop$({ id: "minimal", model: "model" });
const stores = await indexedDbStores({ name: "minimal-app" });
const app = createApp(
  defineConfig({ stores, effects: { model: createLlmEffect(scriptedModel([{ text: "Hello." }])) } }),
);
watchExecutions(stores, (executions) => console.log(executions.length));
await app.start(loop, { executionId: "run-1", input: { prompt: "Say hello." } });
console.log(await app.result("run-1"));
