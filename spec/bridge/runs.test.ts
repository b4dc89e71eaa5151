// loomwork/bridge start and stream (issue 36: the bridge offers what docs/desktop.md otherwise made users write):
// over node:worker_threads, the UI starts a run in the owner's thread, reads its stream of parts as the owner's
// app.stream gives them, and sees it listed; an owner without the options, or refusing, rejects with its reason.
import { MessageChannel, Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { createApp, defineConfig, memoryStores, type StreamPart } from "../../index.js";
import { createReadModels } from "../../readModels.js";
import {
  BridgeDisconnectedError,
  BridgeSendError,
  connectBridge,
  serveBridge,
  type BridgeClient,
} from "../../adapters/bridge/index.js";
import { DEFAULT_PROMPT, LOOP_ID, researchEffects, researchLoop } from "../../stories/browser-offline/agent.js";

let worker: Worker | undefined;
let client: BridgeClient | undefined;
afterEach(async () => {
  client?.close();
  await worker?.terminate();
});

async function owner(): Promise<BridgeClient> {
  const { port1, port2 } = new MessageChannel();
  const ready = new Promise<void>((resolve) => port1.on("message", (m: { ready?: boolean }) => m.ready && resolve()));
  worker = new Worker(new URL("./runsOwner.mjs", import.meta.url), {
    workerData: { port: port2 },
    transferList: [port2],
  });
  const bridge = connectBridge(port1);
  await ready;
  return bridge;
}

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const all: StreamPart[] = [];
  for await (const part of parts) all.push(part);
  return all;
}

/** The parts app.stream gives in the owner's own process for the same run. */
async function inProcessParts(): Promise<StreamPart[]> {
  const app = createApp(
    defineConfig({ stores: memoryStores(), effects: researchEffects(0, () => undefined), logics: [researchLoop] }),
  );
  await app.start(researchLoop, { executionId: "reference", input: { prompt: DEFAULT_PROMPT } });
  return collect(app.stream("reference"));
}

describe("loomwork/bridge: start, stream, list", () => {
  it("the UI starts a run in the owner, streams its parts to the end and sees it listed", async () => {
    client = await owner();
    const run = await client.start(LOOP_ID, { input: { prompt: DEFAULT_PROMPT }, executionId: "ui-1" });
    expect(run.id).toBe("ui-1");
    const parts = await collect(client.stream("ui-1"));
    const reference = await inProcessParts();
    // Each agent's parts in the order it made them; a sub-agent's (tagged) interleave with its lead's as they ran.
    const byAgent = (list: StreamPart[]) => {
      const agents: Record<string, string[]> = {};
      for (const p of list) (agents[p.agent ?? "lead"] ??= []).push(p.type);
      return agents;
    };
    expect(byAgent(parts)).toEqual(byAgent(reference));
    expect(Object.keys(byAgent(parts)).sort()).toEqual(["fact-check", "lead"]);
    expect(parts.length).toBeGreaterThan(3);
    await expect.poll(() => run.getSnapshot()?.status).toBe("done");
    const listed = new Promise<void>((resolve) =>
      client!.executions.subscribe((views) => {
        if (views.some((v) => v.executionId === "ui-1" && v.status === "done")) resolve();
      }),
    );
    await listed;
  });

  it("breaking out of a stream leaves the run going, and a later stream of the ended run reads", async () => {
    client = await owner();
    const run = await client.start(LOOP_ID, { input: { prompt: DEFAULT_PROMPT } });
    expect(run.id).toBe("run-1");
    for await (const part of client.stream(run.id)) {
      expect(part.type).toBeTypeOf("string");
      break;
    }
    await expect.poll(() => run.getSnapshot()?.status).toBe("done");
    // A later stream of the ended run still reads, from the owner's journal.
    expect((await collect(client.stream(run.id))).length).toBeGreaterThan(0);
  });

  it("refusals reject with the owner's reason; an owner gone ends a stream and a start with BridgeDisconnectedError", async () => {
    client = await owner();
    const wrong = await client.start("other-logic", { input: {} }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(BridgeSendError);
    expect((wrong as BridgeSendError).ownerError.message).toContain('not "other-logic"');
    await expect(client.start(LOOP_ID, { input: { prompt: 42 } })).rejects.toThrow("input.prompt must be a string");
    await expect(collect(client.stream("not-served"))).rejects.toBeInstanceOf(BridgeSendError);

    const run = await client.start(LOOP_ID, { input: { prompt: DEFAULT_PROMPT } });
    const reading = collect(client.stream(run.id));
    reading.catch(() => undefined);
    await worker!.terminate();
    const ended = await reading.then(
      () => undefined,
      (e: unknown) => e,
    );
    // Either the stream ended before the owner went, or it was cut with the typed error.
    if (ended !== undefined) expect(ended).toBeInstanceOf(BridgeDisconnectedError);
    await expect(client.start(LOOP_ID, { input: { prompt: DEFAULT_PROMPT } })).rejects.toBeInstanceOf(
      BridgeDisconnectedError,
    );
  });

  it("an owner without the options refuses starts and streams", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));
    const { port1, port2 } = new MessageChannel();
    const server = serveBridge(createReadModels(app), port2);
    client = connectBridge(port1);
    const refused = await client.start(LOOP_ID, { input: {} }).catch((e: unknown) => e);
    expect((refused as BridgeSendError).ownerError.name).toBe("BridgeStartRefusedError");
    const stream = await collect(client.stream("x")).catch((e: unknown) => e);
    expect((stream as BridgeSendError).ownerError.name).toBe("BridgeStreamRefusedError");
    server.close();
    port1.close();
    await app.close();
  });
});
