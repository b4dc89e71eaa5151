// The owner of the bridge page, in a dedicated Worker: the app on IndexedDB, "digest-1" started and
// exposed, served to the page over the worker's own postMessage channel. Only TOOL_APPROVAL events from
// the UI are allowed.
import { serveBridge } from "../../../adapters/bridge/index.js";
import { indexedDbStores } from "../../../adapters/indexeddb/index.js";
import { createApp, createToolEffect, defineConfig } from "../../../index.js";
import { digest, digestEffects } from "./agent.js";
import { createReadModels } from "../../../readModels.js";

const stores = await indexedDbStores({ name: "bridge-owner" });
const effects = {
  ...digestEffects(() => undefined, 150),
  read: createToolEffect(async ({ page }: { page: number }) => `page ${page}`, {
    needsApproval: ({ page }) => page === 2,
  }),
};
const app = createApp(defineConfig({ stores, effects, logics: [digest] }));
const bridge = serveBridge(createReadModels(app), self as unknown as Worker, {
  allowSend: (_id, event) => event.type === "TOOL_APPROVAL",
});
bridge.expose(await app.start(digest, { executionId: "digest-1", input: { prompt: "How do barn owls hunt?" } }));
// A module worker's messages that arrive before its listener exists are lost: the page connects once told.
self.postMessage({ ready: true });
