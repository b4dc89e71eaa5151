// The owning thread of spec/bridge/bridge.test.ts: an app on memory stores, served over the port it was
// handed. It starts "chat-1" (parked until APPROVE) and exposes it; "secret" is started and not exposed.
// With `silent`, the owner never answers a send (a send stays pending until the owner dies); with
// `heartbeatMs`, it pings the UI.
import { workerData, type MessagePort } from "node:worker_threads";
import { serveBridge, type BridgePort } from "../../adapters/bridge/index.js";
import { createApp, defineConfig, memoryStores } from "../../index.js";
import { demoMachine } from "../support/demoMachine.js";
import { countedDemoEffects } from "../support/harness.js";
import { createReadModels } from "../../readModels.js";

const { port, silent, heartbeatMs } = workerData as { port: MessagePort; silent?: boolean; heartbeatMs?: number };
const served: BridgePort = silent
  ? {
      postMessage: (message) => (message as { op?: string }).op !== "sent" && port.postMessage(message),
      on: (type, listener) => void port.on(type, listener),
      off: (type, listener) => void port.off(type, listener),
      start: () => port.start(),
    }
  : port;
const app = createApp(defineConfig({ stores: memoryStores(), effects: countedDemoEffects().effects }));
const bridge = serveBridge(createReadModels(app), served, {
  allowSend: (_id, event) => event.type !== "REJECT",
  ...(heartbeatMs ? { heartbeatMs } : {}),
});
const chat = await app.start(demoMachine, { executionId: "chat-1", input: { topic: "owls" } });
bridge.expose(chat);
await app.start(demoMachine, { executionId: "secret", input: { topic: "hidden" } });
port.postMessage({ ready: true });
