// Issue 34: a needsApproval tool deep in a tree parks that sub-agent; the lead's read models list the call with its
// path from the lead, and a decision sent to the lead with the call's id reaches the sub-agent that waits for it. A
// call id that waits in two executions of the tree is refused, naming both, nothing journaled.
import { describe, expect, it } from "vitest";
import { ApprovalAmbiguousError } from "../../../actors/agents/approvals.js";
import { createApp, defineConfig, memoryStores, type JournaledActor } from "../../../index.js";
import { createReadModels } from "../../../readModels.js";
import { EVENT_RECEIVED } from "../../../stores/schema.js";
import { lead, treeEffects, until } from "./support.js";

describe("approvals deep in a tree of agents", () => {
  it("lists a sub-agent's parked call at the lead with its path, and a decision sent to the lead reaches it", async () => {
    const { calls, effects } = treeEffects({ approveSearch: true, callIds: true });
    const app = createApp(defineConfig({ stores: memoryStores(), effects }));
    const models = createReadModels(app);
    await models.ready;
    const actor: JournaledActor = await app.start(lead, { executionId: "t1", input: { prompt: "owls and bats?" } });
    await until(() => models.approvals("t1").length === 2, "both sub-agents parked");
    expect(models.approvals("t1")).toEqual([
      {
        executionId: "t1/tool:0:0",
        toolCallId: "call-owls",
        toolName: "search",
        input: { q: "owls" },
        stepId: "researcher#turn:0:model",
        path: [
          { executionId: "t1", agent: "lead" },
          { executionId: "t1/tool:0:0", agent: "researcher" },
        ],
      },
      expect.objectContaining({ executionId: "t1/tool:0:1", toolCallId: "call-bats" }),
    ]);
    // The sub-agent's own view and a subtree list it too; the lead's own view has none of its own.
    expect(models.execution("t1")?.pendingApprovals).toEqual([]);
    expect(models.approvals("t1/tool:0:1").map((a) => a.toolCallId)).toEqual(["call-bats"]);

    await actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call-owls", approved: true });
    await actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call-bats", approved: false, reason: "not now" });
    const output = (await app.result("t1")) as { text: string };
    expect(output.text).toContain("owls found");
    expect(calls.search).toBe(1);
    expect(models.approvals("t1")).toEqual([]);
    // Journaled in the sub-agent that waited, not in the lead.
    const decided = (await app.log("t1/tool:0:1")).filter((r) => r.type === EVENT_RECEIVED);
    expect(decided.map((r) => r.type === EVENT_RECEIVED && r.event)).toEqual([
      { type: "TOOL_APPROVAL", toolCallId: "call-bats", approved: false, reason: "not now" },
    ]);
    expect((await app.log("t1")).some((r) => r.type === EVENT_RECEIVED)).toBe(false);
    models.dispose();
    await app.close();
  });

  it("a decision by the lead's id reaches the sub-agent from a resumed app too", async () => {
    const stores = memoryStores();
    const first = treeEffects({ approveSearch: true, callIds: true, questions: ["owls"] });
    const app = createApp(defineConfig({ stores, effects: first.effects }));
    await app.start(lead, { executionId: "t2", input: { prompt: "owls?" } });
    const models = createReadModels(app);
    await until(async () => (await models.ready, models.approvals("t2").length === 1), "the sub-agent parked");
    models.dispose();
    await app.close();

    const second = treeEffects({ approveSearch: true, callIds: true, questions: ["owls"] });
    const again = createApp(defineConfig({ stores, effects: second.effects, logics: [lead] }));
    const actor = await again.resume("t2");
    await actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call-owls", approved: true });
    expect(((await again.result("t2")) as { text: string }).text).toContain("owls found");
    await again.close();
  });

  it("refuses a call id that waits in two executions of the tree, naming both; nothing is journaled", async () => {
    const { effects } = treeEffects({ approveSearch: true });
    const app = createApp(defineConfig({ stores: memoryStores(), effects }));
    const models = createReadModels(app);
    await models.ready;
    const actor = await app.start(lead, { executionId: "t3", input: { prompt: "owls and bats?" } });
    await until(() => models.approvals("t3").length === 2, "both sub-agents parked");
    const [owls, bats] = models.approvals("t3");
    expect(owls!.toolCallId).toBe(bats!.toolCallId);
    const heads = async () => Promise.all(["t3", "t3/tool:0:0", "t3/tool:0:1"].map((id) => app.stores.events.head(id)));
    const before = await heads();
    const error = await actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: owls!.toolCallId, approved: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApprovalAmbiguousError);
    expect(error).toMatchObject({
      executionId: "t3",
      toolCallId: owls!.toolCallId,
      executionIds: ["t3/tool:0:0", "t3/tool:0:1"],
    });
    expect(String((error as Error).message)).toContain("t3/tool:0:1");
    expect(await heads()).toEqual(before);
    // Sent to the sub-agent itself, the same id is not ambiguous.
    await (
      await app.resume("t3/tool:0:0")
    ).sendAsync({
      type: "TOOL_APPROVAL",
      toolCallId: owls!.toolCallId,
      approved: true,
    });
    await until(() => models.approvals("t3").length === 1, "one call decided");
    await app.stop("t3");
    models.dispose();
    await app.close();
  });
});
