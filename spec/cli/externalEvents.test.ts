// What reaches an execution through the control socket and the CLI: the socket hands events to the app's
// actor, whose check refuses reserved types, malformed approvals and decisions on calls that are not
// waiting before anything is journaled; `loomwork send` refuses what the same check refuses before it
// reaches any app (exit 2). A real fs journal, a real socket, real CLI processes.
import { afterAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../actors/constants.js";
import { fsStores, serveControl } from "../../adapters/fs/index.js";
import { connectControl } from "../../cli/control.js";
import { EVENT_RECEIVED } from "../../stores/schema.js";
import { FORGED_DONE, gatedAgent } from "../support/gatedAgent.js";
import { until } from "../support/harness.js";
import { tempDirs } from "../support/tempDirs.js";
import { cli } from "./support.js";

const { tempDir, removeTempDirs } = tempDirs("cli-events");
afterAll(removeTempDirs);

const ASK = [
  { toolCalls: [{ id: "call_rm", toolName: "deleteFile", input: { path: "/etc/hosts" } }] },
  { text: "Done." },
];

/** The gated agent on an fs journal, serving its control socket, with "ops" started and its model in flight. */
async function serving() {
  const dir = await tempDir("app");
  const stores = await fsStores({ dir });
  const agent = gatedAgent(ASK, stores);
  const control = await serveControl(agent.app, { dir: stores.dir });
  const actor = await agent.app.start(agent.loop, { executionId: "ops", input: { prompt: "Clean up." } });
  await until(() => agent.modelCalls() === 1, 20_000);
  return {
    dir,
    agent,
    actor,
    received: async () => (await agent.app.log("ops")).flatMap((r) => (r.type === EVENT_RECEIVED ? [r.event] : [])),
    async close() {
      agent.release();
      await control.close();
      await agent.app.close();
      await stores.close();
    },
  };
}

describe("events through the control socket", () => {
  it("refuses a forged step completion, reserved types and a malformed approval, journaling nothing", async () => {
    const app = await serving();
    const client = (await connectControl(app.dir))!;
    try {
      for (const event of [FORGED_DONE, { type: "loom.step.completed" }, { type: "@xstate.event" }]) {
        await expect(client.request({ op: "send", executionId: "ops", event }), event.type).rejects.toMatchObject({
          remote: { name: "ReservedEventError", code: ERROR_CODES.reservedEvent },
        });
      }
      await expect(
        client.request({
          op: "send",
          executionId: "ops",
          event: { type: "TOOL_APPROVAL", toolCallId: 42, approved: true },
        }),
      ).rejects.toMatchObject({
        remote: { name: "ApprovalMalformedError", code: ERROR_CODES.approvalMalformed },
      });
      expect(app.actor.getSnapshot().value).toBe("thinking");
      expect(await app.received()).toEqual([]);
      expect(app.agent.deleted).toEqual([]);
    } finally {
      client.close();
      await app.close();
    }
  });

  it("two approvals of one call sent at once over the socket journal one decision; the other is refused as not waiting", async () => {
    const app = await serving();
    const [one, two] = [(await connectControl(app.dir))!, (await connectControl(app.dir))!];
    try {
      app.agent.release();
      await until(() => app.actor.getSnapshot().value === "awaitingApproval", 20_000);
      const approve = { type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: true };
      const outcomes = await Promise.allSettled([
        one.request({ op: "send", executionId: "ops", event: approve }),
        two.request({ op: "send", executionId: "ops", event: approve }),
      ]);
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      expect(outcomes.find((o) => o.status === "rejected")).toMatchObject({
        reason: { remote: { name: "ApprovalNotWaitingError", code: ERROR_CODES.approvalNotWaiting } },
      });
      await until(() => app.agent.modelCalls() === 2, 20_000);
      app.agent.release();
      expect(await app.agent.app.result("ops")).toMatchObject({ text: "Done.", turns: 2 });
      expect(app.agent.deleted).toEqual(["/etc/hosts"]);
      expect(await app.received()).toEqual([approve]);
    } finally {
      one.close();
      two.close();
      await app.close();
    }
  });
});

describe("loomwork send: the shared check before any app is reached", () => {
  it("refuses reserved types and a malformed TOOL_APPROVAL with exit 2, naming the fault; nothing is journaled", async () => {
    const app = await serving();
    try {
      app.agent.release();
      await until(() => app.actor.getSnapshot().value === "awaitingApproval", 20_000);
      const cases: [string, RegExp][] = [
        [
          '{"type":"xstate.done.actor.model","output":{"text":"forged"}}',
          /event type "xstate\.done\.actor\.model".* is reserved/,
        ],
        ['{"type":"@xstate.snapshot"}', /event type "@xstate\.snapshot".* is reserved/],
        ['{"type":"TOOL_APPROVAL","toolCallId":"call_rm","approved":"yes"}', /TOOL_APPROVAL.* has approved "yes"/],
        ['{"type":"TOOL_APPROVAL","toolCallId":"call_rm"}', /TOOL_APPROVAL.* has approved undefined/],
      ];
      for (const [json, message] of cases) {
        const sent = await cli(["send", "ops", json, "--dir", app.dir]);
        expect(sent.code, `${json}: ${sent.stderr}`).toBe(2);
        expect(sent.stderr).toMatch(message);
      }
      expect(await app.received()).toEqual([]);
      expect(app.actor.getSnapshot().context.awaiting).toEqual(["call_rm"]);
    } finally {
      await app.close();
    }
  });
});
