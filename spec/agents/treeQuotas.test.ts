// Quotas across a tree (issue 34): capabilities.quotas apply to an agent and its sub-agents together, so a runaway
// sub-agent is stopped by the root's budget. The refusal names the execution, the step and the tree; calls of
// parallel sub-agents cannot pass the budget together; a single agent keeps its own budget as before.
import { describe, expect, it } from "vitest";
import {
  agentLoop$,
  agentTool,
  createApp,
  createLlmEffect,
  defineConfig,
  memoryStores,
  QuotaExceededError,
  scriptedModel,
  type ModelRequest,
} from "../../index.js";
import { STEP_FAILED } from "../../stores/schema.js";

const researcher = agentLoop$({ id: "researcher", model: "model", warnTranscriptBytes: false });
const lead = agentLoop$({
  id: "lead",
  model: "model",
  tools: [agentTool(researcher, { description: "Research one question" })],
  warnTranscriptBytes: false,
});

// The lead asks three researchers at once; each researcher thinks forever (it always asks for one more turn is
// not possible without tools, so each answers after `turns` replies counted by the test).
function effects() {
  const calls = { lead: 0, researcher: 0 };
  const model = createLlmEffect(
    scriptedModel((request: ModelRequest) => {
      const usage = { inputTokens: 10, outputTokens: 10 };
      if (request.tools?.length) {
        calls.lead++;
        if (request.messages.at(-1)?.role === "tool") return { text: "lead's answer", usage };
        return {
          toolCalls: ["a", "b", "c"].map((q) => ({ toolName: "researcher", input: { prompt: q } })),
          usage,
        };
      }
      calls.researcher++;
      return { text: "found", usage };
    }),
  );
  return { calls, model };
}

describe("quotas across a tree", () => {
  it("stops sub-agents and the lead at the root's budget, naming the execution, the step and the tree", async () => {
    const { calls, model } = effects();
    const app = createApp(
      defineConfig({ stores: memoryStores(), effects: { model }, capabilities: { quotas: { maxModelCalls: 3 } } }),
    );
    await app.start(lead, { executionId: "q1", input: { prompt: "go" } });
    const error = await app.result("q1").then(
      () => undefined,
      (e: unknown) => e,
    );
    // The lead's first call and two researchers' fit the budget of 3; the third researcher and the lead's answer do not.
    expect(calls).toEqual({ lead: 1, researcher: 2 });
    expect((await app.usage("q1")).modelCalls).toBe(3);
    expect(error).toMatchObject({
      name: "ExecutionFailedError",
      error: {
        name: QuotaExceededError.name,
        executionId: "q1",
        stepId: "lead#turn:1:model",
        rootId: "q1",
        quota: "maxModelCalls",
        limit: 3,
        used: 3,
      },
    });
    const refused = [];
    for (const info of await app.executions({ root: "q1" }))
      for (const record of await app.log(info.executionId))
        if (record.type === STEP_FAILED) refused.push({ id: info.executionId, error: record.error });
    const child = refused.find((r) => r.id !== "q1");
    expect(child).toBeDefined();
    expect(JSON.stringify(child!.error)).toContain(`Execution \\"${child!.id}\\" (step \\"researcher#turn:0:model\\")`);
    expect(JSON.stringify(child!.error)).toContain('of its tree \\"q1\\"');
    await app.close();
  });

  it("keeps a single agent's budget its own", async () => {
    const { model } = effects();
    const app = createApp(
      defineConfig({ stores: memoryStores(), effects: { model }, capabilities: { quotas: { maxModelCalls: 1 } } }),
    );
    await app.start(researcher, { executionId: "s1", input: { prompt: "x" } });
    await app.start(researcher, { executionId: "s2", input: { prompt: "y" } });
    expect(await app.result("s1")).toMatchObject({ text: "found" });
    expect(await app.result("s2")).toMatchObject({ text: "found" });
    await app.close();
  });
});
