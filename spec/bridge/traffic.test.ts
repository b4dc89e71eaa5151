// loomwork/bridge's traffic: what an agent run costs on the channel. The owner sends what changed after each
// macrostep (a patch of the snapshot), so the bytes per turn do not grow with the run's length and the
// whole run's traffic stays within 2x of its journal. The UI still sees, after each update, the snapshot the
// owner had when it posted it.
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { benchConfig, benchLoop, EXECUTION_ID } from "../../bench/agent.js";
import { connectBridge, serveBridge, type BridgedSnapshot, type BridgePort } from "../../adapters/bridge/index.js";
import { createApp, memoryStores, type JournaledActor } from "../../index.js";
import { createReadModels } from "../../readModels.js";
import { workloadEffects } from "../support/workload.js";

/** port1 as the owner sees it, counting the bytes of every message posted (their JSON, UTF-8). */
function countingPort(port: MessagePort, onPost: (message: { op?: string }) => void) {
  const counted = { bytes: 0, posts: 0 };
  const wrapper: BridgePort = {
    postMessage(message) {
      counted.bytes += Buffer.byteLength(JSON.stringify(message));
      counted.posts++;
      onPost(message as { op?: string });
      port.postMessage(message);
    },
    on: (type, listener) => void port.on(type, listener),
    off: (type, listener) => void port.off(type, listener),
    start: () => port.start(),
  };
  return { wrapper, counted };
}

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

async function measure(turns: number) {
  // The model waits for the bridge to serve the run, so every macrostep of it crosses the channel.
  let serve!: () => void;
  const served = new Promise<void>((resolve) => (serve = resolve));
  const effects = workloadEffects(turns).effects;
  const model = effects.model!;
  effects.model = { ...model, run: async (input, ctx) => (await served, model.run(input, ctx)) };
  const app = createApp(benchConfig(memoryStores(), turns, "off", effects));
  const { port1, port2 } = new MessageChannel();
  const owner: { actor?: JournaledActor } = {};
  // What the owner's actor held when each snapshot or patch was posted, in order.
  const expected: unknown[] = [];
  const { wrapper, counted } = countingPort(port1, (message) => {
    if (message.op === "snapshot" || message.op === "patch")
      expected.push(owner.actor ? plain(owner.actor.getSnapshot()) : null);
  });
  const bridge = serveBridge(createReadModels(app), wrapper);
  const client = connectBridge(port2);
  const chat = client.actor(EXECUTION_ID);
  const seen: (BridgedSnapshot | null)[] = [];
  chat.subscribe((snapshot) => seen.push(snapshot));
  // The owner has the UI's watch (it answered null: nothing exposed yet) before the run starts.
  for (let i = 0; i < 400 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(seen).toEqual([null]);
  const actor = (owner.actor = await app.start(benchLoop(turns), {
    executionId: EXECUTION_ID,
    input: { prompt: "research" },
  }));
  bridge.expose(actor);
  serve();
  await app.result(EXECUTION_ID);
  for (let i = 0; i < 400 && (chat.getSnapshot()?.status !== "done" || seen.length < expected.length); i++)
    await new Promise((r) => setTimeout(r, 10));
  expect(chat.getSnapshot()?.status).toBe("done");
  expect(seen.length).toBe(expected.length);
  // Each update the UI saw equals the owner's snapshot at the time it was posted.
  for (let i = 0; i < seen.length; i++) expect(seen[i], `update ${i}`).toEqual(expected[i]);
  expect(chat.getSnapshot()).toEqual(plain(actor.getSnapshot()));
  const journal = (await app.stats(EXECUTION_ID)).logBytes;
  client.close();
  bridge.close();
  port1.close();
  await app.close();
  return { turns, bytes: counted.bytes, posts: counted.posts, perTurn: counted.bytes / turns, journal };
}

describe("loomwork/bridge traffic", () => {
  it("sends what changed: bytes per turn constant in the run's length, total within 2x of the journal", async () => {
    const short = await measure(40);
    const long = await measure(160);
    console.log(
      [short, long]
        .map(
          (m) =>
            `${m.turns} turns: ${m.bytes} B over the port in ${m.posts} posts (${Math.round(m.perTurn)} B/turn), journal ${m.journal} B (${(m.bytes / m.journal).toFixed(2)}x)`,
        )
        .join("\n"),
    );
    expect(long.perTurn).toBeLessThan(1.5 * short.perTurn);
    for (const m of [short, long]) expect(m.bytes).toBeLessThan(2 * m.journal);
  }, 120_000);
});
