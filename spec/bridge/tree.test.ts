// Issue 34 over loomwork/bridge: a UI that holds a lead's actor decides a call one of its sub-agents parked by the
// lead's id and the call's id; the execution list it gets carries what approvalsInTree needs to show the call's path.
import { MessageChannel } from "node:worker_threads";
import { afterEach, expect, it } from "vitest";
import { connectBridge, serveBridge } from "../../adapters/bridge/index.js";
import { createApp, defineConfig, memoryStores } from "../../index.js";
import { approvalsInTree, createReadModels, type ExecutionView } from "../../readModels.js";
import { lead, treeEffects, until } from "../agents/tree/support.js";

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

it("a decision sent over the bridge to the lead reaches the sub-agent that waits for it", async () => {
  const app = createApp(
    defineConfig({ stores: memoryStores(), effects: treeEffects({ approveSearch: true, callIds: true }).effects }),
  );
  const models = createReadModels(app);
  const { port1, port2 } = new MessageChannel();
  const server = serveBridge(models, port1);
  const client = connectBridge(port2);
  open.push(app, { close: () => port2.close() }, { close: () => port1.close() }, server, client);
  server.expose(await app.start(lead, { executionId: "b1", input: { prompt: "owls and bats?" } }));

  let views: ExecutionView[] = [];
  client.executions.subscribe((list) => (views = list));
  await until(() => approvalsInTree(views, "b1").length === 2, "the UI sees both parked calls");
  expect(approvalsInTree(views, "b1")[1]).toMatchObject({
    executionId: "b1/tool:0:1",
    toolCallId: "call-bats",
    path: [
      { executionId: "b1", agent: "lead" },
      { executionId: "b1/tool:0:1", agent: "researcher" },
    ],
  });
  const chat = client.actor("b1");
  await chat.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call-owls", approved: true });
  await chat.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call-bats", approved: true });
  expect(((await app.result("b1")) as { text: string }).text).toMatch(/owls found.*bats found/);
  await until(() => approvalsInTree(views, "b1").length === 0, "the UI sees none left");
});
