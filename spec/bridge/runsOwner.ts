// The owning thread of spec/bridge/runs.test.ts: the browser-offline story's research agent on memory stores,
// served over the port it was handed, letting the UI start runs of it (and of nothing else) and read their streams.
import { workerData, type MessagePort } from "node:worker_threads";
import { serveBridge } from "../../adapters/bridge/index.js";
import { createApp, defineConfig, memoryStores } from "../../index.js";
import { createReadModels } from "../../readModels.js";
import { LOOP_ID, researchEffects, researchLoop } from "../../stories/browser-offline/agent.js";

const { port } = workerData as { port: MessagePort };
const app = createApp(
  defineConfig({ stores: memoryStores(), effects: researchEffects(5, () => undefined), logics: [researchLoop] }),
);
let runs = 0;
serveBridge(createReadModels(app), port, {
  start: async ({ logicId, input, executionId }) => {
    if (logicId !== LOOP_ID) throw new Error(`this app starts only "${LOOP_ID}", not "${logicId}"`);
    const prompt = (input as { prompt?: unknown } | undefined)?.prompt;
    if (typeof prompt !== "string") throw new TypeError("input.prompt must be a string");
    return app.start(logicId, { executionId: executionId ?? `run-${++runs}`, input: { prompt } });
  },
  stream: (executionId) => app.stream(executionId),
});
port.postMessage({ ready: true });
