// The owning thread of spec/bridge/bridge.test.ts: an app on memory stores, served over the port it was
// handed. It starts "chat-1" (parked until APPROVE) and exposes it; "secret" is started and not exposed.
import { workerData, type MessagePort } from "node:worker_threads";
import { serveBridge } from "../../adapters/bridge/index.js";
import { createApp, defineConfig, memoryStores } from "../../index.js";
import { demoMachine } from "../support/demoMachine.js";
import { countedDemoEffects } from "../support/harness.js";
import { createReadModels } from "../../readModels.js";

const { port } = workerData as { port: MessagePort };
const app = createApp(defineConfig({ stores: memoryStores(), effects: countedDemoEffects().effects }));
const bridge = serveBridge(createReadModels(app), port, { allowSend: (_id, event) => event.type !== "REJECT" });
const chat = await app.start(demoMachine, { executionId: "chat-1", input: { topic: "owls" } });
bridge.expose(chat);
await app.start(demoMachine, { executionId: "secret", input: { topic: "hidden" } });
port.postMessage({ ready: true });
