// Issue 34: a lead and its sub-agents in the inspector, through loomwork/inspector's server: each sub-agent is an
// actor of its own whose parent is the lead's session (nested, as XState's child actors are), its definition kept
// for a viewer that connects late.
import { createInspector } from "@statelyai/inspect";
import { afterEach, expect, it } from "vitest";
import { WebSocket } from "ws";
import { createInspectorServer, VIEWER_PATH, type InspectorServer } from "../../adapters/inspector/index.js";
import { createApp, defineConfig, memoryStores } from "../../index.js";
import { lead, treeEffects, until } from "../agents/tree/support.js";

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function connect(url: string): Promise<{ socket: WebSocket; received: Record<string, unknown>[] }> {
  const socket = new WebSocket(url);
  open.push({ close: () => socket.terminate() });
  const received: Record<string, unknown>[] = [];
  socket.on("message", (data) => received.push(JSON.parse(String(data)) as Record<string, unknown>));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  return { socket, received };
}

it("shows a lead's sub-agents as actors nested under the lead, to a live viewer and a late one", async () => {
  const server: InspectorServer = await createInspectorServer({ port: 0 });
  open.push(server);
  const viewer = await connect(`${server.url}${VIEWER_PATH}`);
  const source = await connect(`${server.url}/app`);
  const inspector = createInspector({ send: (event) => source.socket.send(JSON.stringify(event)) });
  const app = createApp(
    defineConfig({
      stores: memoryStores(),
      effects: treeEffects().effects,
      observability: { inspect: inspector.inspect },
    }),
  );
  open.push(app);
  await app.start(lead, { executionId: "i1", input: { prompt: "owls and bats?" } });
  await app.result("i1");
  const agents = (received: Record<string, unknown>[]) =>
    received
      .filter((e) => e.type === "@xstate.actor" && !String(e.sessionId).slice("loom:".length).includes("#"))
      .filter((e) => ["loom:i1", "loom:i1/tool:0:0", "loom:i1/tool:0:1"].includes(String(e.sessionId)))
      .map((e) => ({ sessionId: e.sessionId, parentId: e.parentId, name: e.name }))
      .sort((a, b) => String(a.sessionId).localeCompare(String(b.sessionId)));
  const expected = [
    { sessionId: "loom:i1", parentId: undefined, name: "i1" },
    { sessionId: "loom:i1/tool:0:0", parentId: "loom:i1", name: "i1/tool:0:0" },
    { sessionId: "loom:i1/tool:0:1", parentId: "loom:i1", name: "i1/tool:0:1" },
  ];
  await until(() => agents(viewer.received).length === 3, "the viewer sees the three agents");
  expect(agents(viewer.received)).toEqual(expected);
  // Each sub-agent's own steps are its children, not the lead's.
  const researcherModel = viewer.received.find(
    (e) => e.type === "@xstate.actor" && e.sessionId === "loom:i1/tool:0:0/model",
  );
  expect(researcherModel).toMatchObject({ parentId: "loom:i1/tool:0:0" });
  const late = await connect(`${server.url}${VIEWER_PATH}`);
  await until(() => agents(late.received).length === 3, "a late viewer gets them too");
  expect(agents(late.received)).toEqual(expected);
});
