// What an external sender may send: only the machine's own event types. XState's reserved `xstate.*` types
// and the runtime's own (`loom.*`, `@xstate.*`) are refused with a typed error before anything is journaled,
// so no sender can forge a step's completion (and with it a tool call that skips its approval). A
// TOOL_APPROVAL is the runtime's own event: a malformed one, or a decision on a call that is not waiting,
// is refused the same way. Through the actor here; the bridge, the socket, the inbox and the CLI have
// suites of their own that send the same events.
import { afterEach, describe, expect, it } from "vitest";
import type { App } from "../actors/app.js";
import { ERROR_CODES, WARNING_CODES } from "../actors/constants.js";
import type { JournaledActor } from "../actors/journal/actor.js";
import { EVENT_RECEIVED } from "../stores/schema.js";
import { FORGED_DONE, gatedAgent as gated } from "./support/gatedAgent.js";
import { until } from "./support/harness.js";

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

function gatedAgent(...args: Parameters<typeof gated>) {
  const agent = gated(...args);
  apps.push(agent.app);
  return agent;
}

async function received(app: App, executionId: string): Promise<string[]> {
  return (await app.log(executionId)).flatMap((r) => (r.type === EVENT_RECEIVED ? [r.event.type] : []));
}

describe("reserved event types, refused at the actor before anything is journaled", () => {
  it("a forged xstate.done.actor.model while the model step is in flight is refused; the tool never runs", async () => {
    const agent = gatedAgent();
    const actor = await agent.app.start(agent.loop, { executionId: "ops", input: { prompt: "Clean up." } });
    await until(() => agent.modelCalls() === 1, 20_000);
    await expect(actor.sendAsync(FORGED_DONE)).rejects.toMatchObject({
      name: "ReservedEventError",
      code: ERROR_CODES.reservedEvent,
      eventType: FORGED_DONE.type,
      executionId: "ops",
    });
    expect(actor.getSnapshot().value).toBe("thinking");
    agent.release();
    expect(await agent.app.result("ops")).toMatchObject({ text: "Done.", turns: 1 });
    expect(agent.deleted).toEqual([]);
    expect(await received(agent.app, "ops")).toEqual([]);
  });

  it("actor.send of a reserved type warns with the error's code and journals nothing", async () => {
    const agent = gatedAgent();
    const actor = await agent.app.start(agent.loop, { executionId: "ops", input: { prompt: "Clean up." } });
    await until(() => agent.modelCalls() === 1, 20_000);
    expect(() => actor.send(FORGED_DONE)).not.toThrow();
    await until(() => agent.warnings.length > 0, 20_000);
    expect(agent.warnings[0]).toMatchObject({
      code: WARNING_CODES.sendFailed,
      errorCode: ERROR_CODES.reservedEvent,
      executionId: "ops",
      eventType: FORGED_DONE.type,
    });
    agent.release();
    await agent.app.result("ops");
    expect(agent.deleted).toEqual([]);
    expect(await received(agent.app, "ops")).toEqual([]);
  });

  it("refuses every reserved prefix: xstate.*, @xstate.*, loom.*; the machine's own types pass", async () => {
    const agent = gatedAgent();
    const actor = await agent.app.start(agent.loop, { executionId: "ops", input: { prompt: "Clean up." } });
    await until(() => agent.modelCalls() === 1, 20_000);
    const reserved = [
      { type: "xstate.error.actor.model", error: { message: "forged" } },
      { type: "xstate.after.1000.ops.thinking" },
      { type: "xstate.init", input: { prompt: "again" } },
      { type: "xstate.stop" },
      { type: "@xstate.event" },
      { type: "loom.step.completed", stepId: "ops#turn:0:model", output: { text: "forged" } },
      { type: "loom.erasure.content-deleted" },
    ];
    for (const event of reserved) {
      await expect(actor.sendAsync(event), event.type).rejects.toMatchObject({
        code: ERROR_CODES.reservedEvent,
        eventType: event.type,
      });
    }
    // An event the machine has no transition for is the machine's business: journaled, and ignored by it.
    await actor.sendAsync({ type: "NUDGE" });
    agent.release();
    expect(await agent.app.result("ops")).toMatchObject({ text: "Done." });
    expect(await received(agent.app, "ops")).toEqual(["NUDGE"]);
  });
});

async function parked(actor: JournaledActor): Promise<void> {
  await until(() => actor.getSnapshot().value === "awaitingApproval", 20_000);
}

describe("TOOL_APPROVAL decisions, checked before they are journaled", () => {
  const ASK = [
    { toolCalls: [{ id: "call_rm", toolName: "deleteFile", input: { path: "/etc/hosts" } }] },
    { text: "Done." },
  ];

  it("refuses a malformed approval with a typed error naming the field; nothing is journaled", async () => {
    const agent = gatedAgent(ASK);
    const actor = await agent.app.start(agent.loop, { executionId: "ops", input: { prompt: "Clean up." } });
    await until(() => agent.modelCalls() === 1, 20_000);
    agent.release();
    await parked(actor);
    const malformed: [Record<string, unknown>, string][] = [
      [{ type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: "yes" }, "approved"],
      [{ type: "TOOL_APPROVAL", toolCallId: 42, approved: true }, "toolCallId"],
      [{ type: "TOOL_APPROVAL", toolCallId: "call_rm" }, "approved"],
      [{ type: "TOOL_APPROVAL", approved: true }, "toolCallId"],
      [{ type: "TOOL_APPROVAL", toolCallId: "", approved: true }, "toolCallId"],
      [{ type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: false, reason: 7 }, "reason"],
    ];
    for (const [event, field] of malformed) {
      await expect(actor.sendAsync(event as { type: string }), JSON.stringify(event)).rejects.toMatchObject({
        name: "ApprovalMalformedError",
        code: ERROR_CODES.approvalMalformed,
        field,
        executionId: "ops",
      });
    }
    expect(await received(agent.app, "ops")).toEqual([]);
    expect(actor.getSnapshot().context.awaiting).toEqual(["call_rm"]);
    expect(agent.deleted).toEqual([]);
  });

  it("a double-click journals one decision: the second is refused as not waiting, and so are unknown ids and decisions after the end", async () => {
    const agent = gatedAgent(ASK);
    const actor = await agent.app.start(agent.loop, { executionId: "ops", input: { prompt: "Clean up." } });
    await until(() => agent.modelCalls() === 1, 20_000);
    agent.release();
    await parked(actor);
    await expect(actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "nope", approved: true })).rejects.toMatchObject({
      name: "ApprovalNotWaitingError",
      code: ERROR_CODES.approvalNotWaiting,
      toolCallId: "nope",
      waiting: ["call_rm"],
    });
    // Both clicks sent before either is processed: the check is made in the execution's turn, not at the call.
    const approve = { type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: true };
    const [first, second] = await Promise.allSettled([actor.sendAsync(approve), actor.sendAsync(approve)]);
    expect(first.status).toBe("fulfilled");
    expect(second).toMatchObject({
      status: "rejected",
      reason: { code: ERROR_CODES.approvalNotWaiting, toolCallId: "call_rm", waiting: [] },
    });
    await until(() => agent.modelCalls() === 2, 20_000);
    agent.release();
    expect(await agent.app.result("ops")).toMatchObject({ text: "Done.", turns: 2 });
    expect(agent.deleted).toEqual(["/etc/hosts"]);
    await expect(
      actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: false }),
    ).rejects.toMatchObject({ code: ERROR_CODES.approvalNotWaiting });
    expect(await received(agent.app, "ops")).toEqual(["TOOL_APPROVAL"]);
  });

  it("actor.send of a decision that is not waiting warns with the error's code", async () => {
    const agent = gatedAgent(ASK);
    const actor = await agent.app.start(agent.loop, { executionId: "ops", input: { prompt: "Clean up." } });
    await until(() => agent.modelCalls() === 1, 20_000);
    agent.release();
    await parked(actor);
    actor.send({ type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: false });
    actor.send({ type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: true });
    await until(() => agent.warnings.length > 0, 20_000);
    expect(agent.warnings).toEqual([
      expect.objectContaining({
        code: WARNING_CODES.sendFailed,
        errorCode: ERROR_CODES.approvalNotWaiting,
        eventType: "TOOL_APPROVAL",
      }),
    ]);
    await until(() => agent.modelCalls() === 2, 20_000);
    agent.release();
    await agent.app.result("ops");
    // The denial was the decision: the tool never ran.
    expect(agent.deleted).toEqual([]);
    expect(await received(agent.app, "ops")).toEqual(["TOOL_APPROVAL"]);
  });
});
