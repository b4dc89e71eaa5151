// loomwork/bridge over node:worker_threads: the journal's owner runs in a worker thread, the "UI" here
// holds remote actors over a real MessagePort (structured clone). Snapshots arrive as the execution moves,
// sends are journaled in the owner, refused or unknown sends reject, and the execution list follows.
import { MessageChannel, Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import {
  BridgeSendError,
  connectBridge,
  type BridgeClient,
  type BridgedSnapshot,
} from "../../adapters/bridge/index.js";

let worker: Worker | undefined;
let client: BridgeClient | undefined;

afterEach(async () => {
  client?.close();
  await worker?.terminate();
});

async function start(): Promise<BridgeClient> {
  const { port1, port2 } = new MessageChannel();
  const ready = new Promise<void>((resolve) => port1.on("message", (m: { ready?: boolean }) => m.ready && resolve()));
  worker = new Worker(new URL("./owner.mjs", import.meta.url), { workerData: { port: port2 }, transferList: [port2] });
  worker.on("error", (error) => {
    throw error;
  });
  const bridge = connectBridge(port1);
  await ready;
  return bridge;
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
};

describe("loomwork/bridge", () => {
  it("serves an owner's actor to another thread: snapshots as it moves, sends journaled in the owner", async () => {
    client = await start();
    const chat = client.actor("chat-1");
    const seen: (BridgedSnapshot | null)[] = [];
    chat.subscribe((s) => seen.push(s));
    await until(() => chat.getSnapshot()?.value === "waiting", "the parked state");
    expect(chat.getSnapshot()).toMatchObject({
      status: "active",
      value: "waiting",
      context: { topic: "owls", approved: false },
    });
    // The same object until the next snapshot arrives (as useSyncExternalStore needs).
    expect(chat.getSnapshot()).toBe(chat.getSnapshot());
    await chat.sendAsync({ type: "APPROVE" });
    await until(() => chat.getSnapshot()?.status === "done", "the end");
    expect(chat.getSnapshot()).toMatchObject({
      status: "done",
      value: "done",
      context: { approved: true },
      output: { approved: true },
    });
    expect(seen.map((s) => s?.value)).toContain("writing");
  });

  it("rejects a send the owner refuses, and one to an execution it does not serve", async () => {
    client = await start();
    const chat = client.actor("chat-1");
    await until(() => chat.getSnapshot() !== null, "the first snapshot");
    await expect(chat.sendAsync({ type: "REJECT" })).rejects.toMatchObject({
      code: "LOOM_BRIDGE_SEND",
      ownerError: { name: "BridgeSendRefusedError" },
    });
    const hidden = client.actor("secret");
    await new Promise((r) => setTimeout(r, 100));
    expect(hidden.getSnapshot()).toBeNull();
    const refused = await hidden.sendAsync({ type: "APPROVE" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BridgeSendError);
    expect(refused).toMatchObject({ ownerError: { name: "UnknownExecutionError" } });
    // An event that is not plain JSON cannot even cross the channel: the send rejects in the sender.
    await expect(chat.sendAsync({ type: "X", f: () => 1 })).rejects.toThrow(/could not be cloned/);
  });

  it("refuses something that is not a message port with a typed error", () => {
    expect(() => connectBridge({ postMessage() {} })).toThrow(expect.objectContaining({ code: "LOOM_BRIDGE_PORT" }));
  });

  it("lists the owner's executions from its read models, and follows them", async () => {
    client = await start();
    const views = client.executions;
    let latest = views.getSnapshot();
    views.subscribe((v) => (latest = v));
    await until(() => latest.length === 2, "both executions");
    expect(latest.map((v) => v.executionId).sort()).toEqual(["chat-1", "secret"]);
    expect(latest.every((v) => v.status === "running")).toBe(true);
  });
});
