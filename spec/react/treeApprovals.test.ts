// @vitest-environment happy-dom
// Issue 34: usePendingApprovals of a lead lists the calls its sub-agents parked, each with its path from the lead;
// a decision sent to the lead's actor reaches the sub-agent, and the list empties.
import { act, createElement } from "react";
import { createRoot } from "react-dom/client";
import { expect, it } from "vitest";
import { usePendingApprovals } from "../../adapters/react/index.js";
import { createApp, defineConfig, memoryStores } from "../../index.js";
import { createReadModels } from "../../readModels.js";
import { lead, treeEffects, until } from "../agents/tree/support.js";

declare global {
  var IS_REACT_ACT_ENVIRONMENT: boolean;
}
globalThis.IS_REACT_ACT_ENVIRONMENT = true;

it("usePendingApprovals of a lead lists its sub-agents' parked calls with their paths", async () => {
  const { effects } = treeEffects({ approveSearch: true, callIds: true, questions: ["owls"] });
  const app = createApp(defineConfig({ stores: memoryStores(), effects }));
  const models = createReadModels(app);
  const container = document.createElement("div");
  document.body.append(container);
  const root = createRoot(container);
  function Approvals() {
    const approvals = usePendingApprovals(models, "r1");
    const all = usePendingApprovals(models);
    return createElement(
      "p",
      { id: "approvals" },
      [...approvals, ...all]
        .map((a) => `${a.toolCallId}@${a.path.map((step) => `${step.agent}:${step.executionId}`).join(">")}`)
        .join(" "),
    );
  }
  const shown = () => document.getElementById("approvals")?.textContent ?? "";
  await act(async () => root.render(createElement(Approvals)));
  const actor = await act(async () => {
    const started = await app.start(lead, { executionId: "r1", input: { prompt: "owls?" } });
    await models.ready;
    await until(() => models.approvals("r1").length === 1, "the sub-agent parked");
    return started;
  });
  const path = "lead:r1>researcher:r1/tool:0:0";
  expect(shown()).toBe(`call-owls@${path} call-owls@${path}`);
  await act(async () => {
    await actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call-owls", approved: true });
    await app.result("r1");
  });
  expect(shown()).toBe("");
  await act(async () => root.unmount());
  container.remove();
  models.dispose();
  await app.close();
});
