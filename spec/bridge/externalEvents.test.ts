// What a UI may send over loomwork/bridge: the owner refuses XState's and the runtime's reserved event types,
// malformed events and approvals, and decisions on calls that are not waiting, whatever `allowSend` says
// (by default it lets everything through), before anything is journaled. Over a real MessageChannel.
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../actors/constants.js";
import {
  BridgeSendError,
  connectBridge,
  serveBridge,
  type BridgeClient,
  type BridgeServer,
} from "../../adapters/bridge/index.js";
import { EVENT_RECEIVED } from "../../stores/schema.js";
import { FORGED_DONE, gatedAgent } from "../support/gatedAgent.js";
import { until } from "../support/harness.js";
import { createReadModels } from "../../readModels.js";

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

const ASK = [
  { toolCalls: [{ id: "call_rm", toolName: "deleteFile", input: { path: "/etc/hosts" } }] },
  { text: "Done." },
];

/** The gated agent's app served over one end of a channel; the UI's client on the other. */
async function served(options: Parameters<typeof serveBridge>[2] = {}, replies = ASK) {
  const agent = gatedAgent(replies);
  const { port1, port2 } = new MessageChannel();
  const server: BridgeServer = serveBridge(createReadModels(agent.app), port1, options);
  const client: BridgeClient = connectBridge(port2);
  open.push(agent.app, { close: () => port2.close() }, { close: () => port1.close() }, server, client);
  const actor = await agent.app.start(agent.loop, { executionId: "ops", input: { prompt: "Clean up." } });
  server.expose(actor);
  await until(() => agent.modelCalls() === 1, 20_000);
  return { agent, actor, client, port: port2 };
}

async function received(agent: ReturnType<typeof gatedAgent>): Promise<unknown[]> {
  return (await agent.app.log("ops")).flatMap((r) => (r.type === EVENT_RECEIVED ? [r.event] : []));
}

/** One raw request on the UI's port, and the owner's reply to it (what a UI that bypasses connectBridge gets). */
function rawSend(port: MessagePort, event: unknown): Promise<{ error?: { name: string; code?: string } }> {
  return new Promise((resolve) => {
    const onMessage = (message: { op?: string; id?: number; error?: { name: string; code?: string } }) => {
      if (message.op !== "sent" || message.id !== 99) return;
      port.off("message", onMessage);
      resolve(message);
    };
    port.on("message", onMessage);
    port.postMessage({ bridge: "loomwork", op: "send", id: 99, executionId: "ops", event });
  });
}

describe("loomwork/bridge: what a UI may send", () => {
  it("refuses a forged step completion with the default allowSend; the tool never runs, nothing is journaled", async () => {
    const { agent, client } = await served({}, [{ text: "Done." }]);
    const refused = await client
      .actor("ops")
      .sendAsync(FORGED_DONE)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BridgeSendError);
    expect(refused).toMatchObject({ ownerError: { name: "ReservedEventError", code: ERROR_CODES.reservedEvent } });
    agent.release();
    expect(await agent.app.result("ops")).toMatchObject({ text: "Done." });
    expect(agent.deleted).toEqual([]);
    expect(await received(agent)).toEqual([]);
  });

  it("refuses reserved and malformed events before allowSend sees them, and answers a raw request with no event", async () => {
    const asked: string[] = [];
    const { agent, client, port } = await served({ allowSend: (_id, event) => (asked.push(event.type), true) }, [
      { text: "Done." },
    ]);
    const chat = client.actor("ops");
    for (const type of ["xstate.error.actor.model", "loom.step.completed", "@xstate.snapshot"]) {
      await expect(chat.sendAsync({ type }), type).rejects.toMatchObject({
        ownerError: { code: ERROR_CODES.reservedEvent },
      });
    }
    await expect(
      chat.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: "yes" }),
    ).rejects.toMatchObject({ ownerError: { code: ERROR_CODES.approvalMalformed } });
    // A UI that bypasses connectBridge: no event at all, or one without a type, gets an answer, not a crashed listener.
    expect(await rawSend(port, null)).toMatchObject({ error: { name: "ConfigError", code: ERROR_CODES.config } });
    expect(await rawSend(port, { text: "no type" })).toMatchObject({
      error: { name: "ConfigError", code: ERROR_CODES.config },
    });
    expect(asked).toEqual([]);
    agent.release();
    await agent.app.result("ops");
    expect(await received(agent)).toEqual([]);
  });

  it("a double-click on Approve through the bridge journals one decision; the second is refused as not waiting", async () => {
    const { agent, actor, client } = await served();
    agent.release();
    await until(() => actor.getSnapshot().value === "awaitingApproval", 20_000);
    const approve = { type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: true };
    const chat = client.actor("ops");
    const [first, second] = await Promise.allSettled([chat.sendAsync(approve), chat.sendAsync(approve)]);
    expect(first.status).toBe("fulfilled");
    expect(second).toMatchObject({
      status: "rejected",
      reason: { ownerError: { name: "ApprovalNotWaitingError", code: ERROR_CODES.approvalNotWaiting } },
    });
    await until(() => agent.modelCalls() === 2, 20_000);
    agent.release();
    expect(await agent.app.result("ops")).toMatchObject({ text: "Done.", turns: 2 });
    expect(agent.deleted).toEqual(["/etc/hosts"]);
    expect(await received(agent)).toEqual([approve]);
  });
});
