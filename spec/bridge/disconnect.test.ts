// loomwork/bridge when one end is gone without a goodbye. The owner dies (a crash, its worker terminated):
// sends in flight and later sends reject with BridgeDisconnectedError, and the client's connection turns
// "disconnected" so a UI stops offering a live-looking approval. A window goes (a reload, a crash) without
// bridge.close(): the owner sees its port close and stops serving it. Over node:worker_threads.
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import {
  BridgeDisconnectedError,
  connectBridge,
  serveBridge,
  type BridgeClient,
  type BridgeConnection,
  type BridgePort,
} from "../../adapters/bridge/index.js";
import { createApp, defineConfig, memoryStores, type JournaledActor } from "../../index.js";
import { createReadModels } from "../../readModels.js";
import { demoMachine } from "../support/demoMachine.js";
import { countedDemoEffects, until } from "../support/harness.js";

const open: { close(): unknown }[] = [];
const workers: Worker[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
  for (const worker of workers.splice(0)) await worker.terminate();
});

/** `port` as a browser's MessagePort is: it never says it closed (Chromium fires no "close"). */
function deafToClose(port: MessagePort): BridgePort {
  return {
    postMessage: (message) => port.postMessage(message),
    on: (type, listener) => void (type === "message" && port.on(type, listener)),
    off: (type, listener) => void (type === "message" && port.off(type, listener)),
    start: () => port.start(),
  };
}

/** The owner of spec/bridge/owner.ts in a worker thread, `silent`: it journals sends and never answers them. */
async function silentOwner(options: { heartbeatMs?: number; deaf?: boolean } = {}): Promise<{
  client: BridgeClient;
  worker: Worker;
}> {
  const { port1, port2 } = new MessageChannel();
  const ready = new Promise<void>((resolve) => port1.on("message", (m: { ready?: boolean }) => m.ready && resolve()));
  const worker = new Worker(new URL("./owner.mjs", import.meta.url), {
    workerData: { port: port2, silent: true, heartbeatMs: options.heartbeatMs },
    transferList: [port2],
  });
  workers.push(worker);
  const client = connectBridge(options.deaf ? deafToClose(port1) : port1);
  open.push(client, { close: () => port1.close() });
  await ready;
  return { client, worker };
}

describe("loomwork/bridge: the owner is gone", () => {
  it("rejects the sends in flight and later ones with BridgeDisconnectedError, and says so in client.connection", async () => {
    const { client, worker } = await silentOwner();
    const chat = client.actor("chat-1");
    await until(() => chat.getSnapshot()?.value === "waiting", 20_000);
    const states: BridgeConnection[] = [];
    client.connection.subscribe((state) => states.push(state));
    expect(client.connection.getSnapshot()).toBe("connected");
    const inFlight = chat.sendAsync({ type: "APPROVE" }).then(
      () => "resolved",
      (error: unknown) => error,
    );
    await worker.terminate();
    const error = await inFlight;
    expect(error).toBeInstanceOf(BridgeDisconnectedError);
    expect(error).toMatchObject({ name: "BridgeDisconnectedError", code: "LOOM_BRIDGE_DISCONNECTED" });
    expect(client.connection.getSnapshot()).toBe("disconnected");
    expect(states).toEqual(["disconnected"]);
    await expect(chat.sendAsync({ type: "APPROVE" })).rejects.toBeInstanceOf(BridgeDisconnectedError);
    // The last snapshot stays readable (a UI shows it as it was, marked disconnected): "waiting", or "done" when the
    // owner journaled the APPROVE and its patch arrived before the worker was terminated (a busy machine).
    expect(["waiting", "done"]).toContain(chat.getSnapshot()?.value);
  });

  it("rejects a send made after the client's own close() instead of leaving it pending", async () => {
    const { client } = await silentOwner();
    const chat = client.actor("chat-1");
    client.close();
    await expect(chat.sendAsync({ type: "APPROVE" })).rejects.toMatchObject({
      code: "LOOM_BRIDGE_SEND",
      ownerError: { name: "BridgeClosedError" },
    });
  });

  it("with heartbeatMs, tells a dead owner from its silence over a port that never says it closed", async () => {
    const { client, worker } = await silentOwner({ heartbeatMs: 200, deaf: true });
    const chat = client.actor("chat-1");
    await until(() => chat.getSnapshot()?.value === "waiting", 20_000);
    const inFlight = chat.sendAsync({ type: "APPROVE" }).then(
      () => "resolved",
      (error: unknown) => error,
    );
    expect(client.connection.getSnapshot()).toBe("connected");
    await worker.terminate();
    expect(await inFlight).toBeInstanceOf(BridgeDisconnectedError);
    expect(client.connection.getSnapshot()).toBe("disconnected");
  });
});

describe("loomwork/bridge: a window is gone without bridge.close()", () => {
  it("stops serving a port whose other end closed: no more posts, its listeners and subscriptions released", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: countedDemoEffects().effects }));
    open.push(app);
    const actor = await app.start(demoMachine, { executionId: "chat-1", input: { topic: "owls" } });
    // Count the subscriptions the bridge holds on the actor.
    let subscribed = 0;
    const counted = Object.create(actor) as JournaledActor;
    counted.subscribe = ((listener: () => void) => {
      subscribed++;
      const subscription = actor.subscribe(listener);
      return { unsubscribe: () => (subscribed--, subscription.unsubscribe()) };
    }) as JournaledActor["subscribe"];
    Object.defineProperty(counted, "id", { value: actor.id });

    const { port1, port2 } = new MessageChannel();
    let posts = 0;
    const port: BridgePort = {
      postMessage: (message) => (posts++, port1.postMessage(message)),
      on: (type, listener) => void port1.on(type, listener),
      off: (type, listener) => void port1.off(type, listener),
      start: () => port1.start(),
    };
    let stopped = 0;
    const bridge = serveBridge(createReadModels(app), port, { onClose: () => stopped++ });
    open.push(bridge, { close: () => port1.close() });
    bridge.expose(counted);
    // The window: a thread that watches chat-1 and lists the executions, and is then terminated.
    const window = new Worker(
      `const { workerData } = require("node:worker_threads");
       workerData.port.on("message", (m) => m.op === "snapshot" && workerData.port.postMessage({ watching: true }));
       workerData.port.postMessage({ bridge: "loomwork", op: "watch", executionId: "chat-1" });
       workerData.port.postMessage({ bridge: "loomwork", op: "list" });`,
      { eval: true, workerData: { port: port2 }, transferList: [port2] },
    );
    workers.push(window);
    await until(() => subscribed === 1 && posts >= 2, 20_000);
    expect(port1.listenerCount("message")).toBeGreaterThan(0);
    await window.terminate();
    await until(() => stopped === 1, 20_000);
    expect(subscribed).toBe(0);
    expect(port1.listenerCount("message")).toBe(0);
    expect(port1.listenerCount("close")).toBe(0);
    const before = posts;
    await actor.sendAsync({ type: "APPROVE" });
    await app.result("chat-1");
    expect(posts).toBe(before);
    bridge.close();
    expect(stopped).toBe(1);
  });

  it("with heartbeatMs, stops serving a window that stopped answering over a port that never says it closed", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: countedDemoEffects().effects }));
    open.push(app);
    const actor = await app.start(demoMachine, { executionId: "chat-1", input: { topic: "owls" } });
    const { port1, port2 } = new MessageChannel();
    let pings = 0;
    const deaf = deafToClose(port1);
    const port: BridgePort = {
      ...deaf,
      postMessage: (message) => ((message as { op?: string }).op === "ping" && pings++, deaf.postMessage(message)),
    };
    let stopped = 0;
    const bridge = serveBridge(createReadModels(app), port, { heartbeatMs: 50, onClose: () => stopped++ });
    open.push(bridge, { close: () => port1.close() });
    bridge.expose(actor);
    const client = connectBridge(port2);
    open.push(client);
    const chat = client.actor("chat-1");
    // A live window answers: the owner goes on serving it past several heartbeats.
    await until(() => pings >= 6, 20_000);
    expect(stopped).toBe(0);
    await chat.sendAsync({ type: "APPROVE" });
    // The window's end is gone (its page unloaded): the owner's pings go unanswered, and it stops.
    port2.close();
    await until(() => stopped === 1, 20_000);
    expect(port1.listenerCount("message")).toBe(0);
    const after = pings;
    await app.result("chat-1");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(pings).toBe(after);
  });

  it("refuses a heartbeat that is not a positive finite number of milliseconds, before it listens", () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: countedDemoEffects().effects }));
    open.push(app);
    const { port1, port2 } = new MessageChannel();
    open.push({ close: () => port1.close() }, { close: () => port2.close() });
    for (const heartbeatMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, "1000" as unknown as number])
      expect(() => serveBridge(createReadModels(app), port1, { heartbeatMs })).toThrow(
        expect.objectContaining({ code: "LOOM_BRIDGE_OPTIONS" }),
      );
    expect(port1.listenerCount("message")).toBe(0);
  });
});
