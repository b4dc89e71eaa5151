// Issue 34 on the fleet: a decision sent to a lead's inbox for a call one of its sub-agents parked reaches the
// sub-agent, wherever the workers run the lead and its sub-agents; a decision on a call no longer waiting is dropped.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_RECEIVED } from "../../stores/schema.js";
import { pendingAfter, type PendingApproval } from "../../actors/agents/approvals.js";
import { lead, researcher, treeEffects, until } from "../agents/tree/support.js";
import { startFleet } from "./workers.js";
import { startPostgres, type PgServer } from "./server.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

describe("approvals in a tree on the fleet", () => {
  it("a decision put in the lead's inbox reaches the sub-agent that waits, on whichever worker", async () => {
    const { effects } = treeEffects({ approveSearch: true, callIds: true });
    const f = await startFleet(server, { name: "treeapprovals", workers: 2, logics: [lead, researcher], effects });
    try {
      await f.app.submit(lead, { executionId: "fa1", input: { prompt: "owls and bats?" } });
      const waiting = async (id: string) => {
        let pending: PendingApproval[] = [];
        for (const record of await f.app.log(id).catch(() => [])) pending = pendingAfter(pending, record);
        return pending.map((p) => p.toolCallId);
      };
      const owls = { type: "TOOL_APPROVAL", toolCallId: "call-owls", approved: true };
      const bats = { type: "TOOL_APPROVAL", toolCallId: "call-bats", approved: false, reason: "not bats" };
      await until(
        async () => (await waiting("fa1/tool:0:0")).length === 1 && (await waiting("fa1/tool:0:1")).length === 1,
        "both sub-agents parked",
      );
      await f.submitter.fleet.send("fa1", owls);
      // A second click: journaled once, in the sub-agent.
      await f.submitter.fleet.send("fa1", owls);
      await f.submitter.fleet.send("fa1", bats);
      expect(((await f.app.result("fa1")) as { text: string }).text).toContain("owls found");
      const decided = (await f.app.log("fa1/tool:0:1")).filter((r) => r.type === EVENT_RECEIVED);
      expect(decided.map((r) => r.type === EVENT_RECEIVED && r.event)).toEqual([
        { type: "TOOL_APPROVAL", toolCallId: "call-bats", approved: false, reason: "not bats" },
      ]);
      expect((await f.app.log("fa1/tool:0:0")).filter((r) => r.type === EVENT_RECEIVED)).toHaveLength(1);
      expect((await f.app.log("fa1")).some((r) => r.type === EVENT_RECEIVED)).toBe(false);
    } finally {
      await f.close();
    }
  }, 60_000);
});
