// agentTool (issue 34): another agent as a tool. The model's call starts the agent as a child execution with the
// call's input as its prompt; its final answer is the call's result (tainted with what it saw); several calls in one
// turn run in parallel; a resume re-runs no recorded model or tool call of any agent; bad input is the call's error.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  agentLoop$,
  agentTool,
  ConfigError,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  memoryStores,
  scriptedModel,
  type ModelRequest,
} from "../../index.js";
import { tainted } from "../../machines/helpers/taint.js";
import { EXECUTION_STARTED } from "../../stores/schema.js";

const lastUser = (request: ModelRequest) =>
  String([...request.messages].reverse().find((m) => m.role === "user")?.content ?? "");

const researcher = agentLoop$({
  id: "researcher",
  model: "researchModel",
  tools: ["search"],
  warnTranscriptBytes: false,
});
const lead = agentLoop$({
  id: "lead",
  model: "leadModel",
  warnTranscriptBytes: false,
  tools: [
    agentTool(researcher, {
      description: "Research one question",
      inputSchema: z.object({ question: z.string() }),
    }),
  ],
});

// The lead asks two questions at once, then answers with what came back.
const leadReplies = (request: ModelRequest, call: number) => ({
  ...leadReply(request, call),
  usage: { inputTokens: 10, outputTokens: 2 },
});
const leadReply = (request: ModelRequest, call: number) =>
  call === 0
    ? {
        toolCalls: [
          { toolName: "researcher", input: { question: "owls" } },
          { toolName: "researcher", input: { question: "bats" } },
        ],
      }
    : {
        text: `summary: ${request.messages
          .filter((m) => m.role === "tool")
          .map((m) => JSON.stringify(m.content))
          .join(" | ")}`,
      };

function counted(block?: () => Promise<void>) {
  const calls = { lead: 0, research: 0, search: 0 };
  const effects = {
    leadModel: createLlmEffect(
      scriptedModel((request, call) => (calls.lead++, leadReplies(request, call)), { id: "lead-model" }),
    ),
    researchModel: createLlmEffect(
      scriptedModel(async (request, call) => {
        calls.research++;
        const usage = { inputTokens: 5, outputTokens: 1 };
        if (call === 0) return { toolCalls: [{ toolName: "search", input: { q: lastUser(request) } }], usage };
        await block?.();
        return { text: `${lastUser(request)} found`, usage };
      }),
    ),
    search: createToolEffect(async ({ q }: { q: string }) => (calls.search++, tainted(`${q}: by night`, "web"))),
  };
  return { calls, effects };
}

describe("agentTool", () => {
  it("runs each call as a child execution, in parallel, its answer the call's result, tainted with what it saw", async () => {
    const { calls, effects } = counted();
    const app = createApp(defineConfig({ stores: memoryStores(), effects }));
    await app.start(lead, { executionId: "l1", input: { prompt: "owls and bats?" } });
    const output = (await app.result("l1")) as { text: string; sawTaintFrom: string[] };
    expect(output.text).toContain("owls found");
    expect(output.text).toContain("bats found");
    expect(output.sawTaintFrom).toEqual(["web"]);
    expect(calls).toEqual({ lead: 2, research: 4, search: 2 });
    const tree = await app.executions({ root: "l1" });
    expect(tree.map((info) => info.executionId)).toEqual(["l1", "l1/tool:0:0", "l1/tool:0:1"]);
    // The tree's usage: the lead's two calls and each sub-agent's two, with each execution's own.
    const usage = await app.usage("l1");
    expect(usage).toMatchObject({ modelCalls: 6, inputTokens: 40, outputTokens: 8, totalTokens: 48 });
    expect(usage.byExecution).toEqual({
      l1: { modelCalls: 2, inputTokens: 20, outputTokens: 4, totalTokens: 24 },
      "l1/tool:0:0": { modelCalls: 2, inputTokens: 10, outputTokens: 2, totalTokens: 12 },
      "l1/tool:0:1": { modelCalls: 2, inputTokens: 10, outputTokens: 2, totalTokens: 12 },
    });
    expect((await app.usage("l1/tool:0:0")).byExecution).toBeUndefined();
    const child = await app.log("l1/tool:0:1");
    expect(child[0]).toMatchObject({ type: EXECUTION_STARTED, logicId: "researcher", input: { prompt: "bats" } });
    await app.close();
  });

  it("resumes a tree whose sub-agents were mid-call: no recorded model or tool call of any agent runs again", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let blocked = 0;
    const stores = memoryStores();
    const first = counted(async () => {
      blocked++;
      await gate;
    });
    const app = createApp(defineConfig({ stores, effects: first.effects }));
    await app.start(lead, { executionId: "l2", input: { prompt: "owls and bats?" } });
    const until = Date.now() + 10_000;
    while (blocked < 2 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(blocked).toBe(2);
    await app.close();
    release();

    const second = counted();
    const again = createApp(defineConfig({ stores, effects: second.effects, logics: [lead, researcher] }));
    expect((await again.resumeUnfinished()).failed).toEqual([]);
    const output = (await again.result("l2")) as { text: string };
    expect(output.text).toContain("owls found");
    expect(output.text).toContain("bats found");
    // Only what had no outcome: each sub-agent's second model call, and the lead's answer.
    expect(second.calls).toEqual({ lead: 1, research: 2, search: 0 });
    await again.close();
  });

  it("answers a call whose input fails the schema with the problems, starting no sub-agent", async () => {
    const { calls, effects } = counted();
    effects.leadModel = createLlmEffect(
      scriptedModel([{ toolCalls: [{ toolName: "researcher", input: { topic: 7 } }] }, { text: "gave up" }]),
    );
    const app = createApp(defineConfig({ stores: memoryStores(), effects }));
    await app.start(lead, { executionId: "l3", input: { prompt: "?" } });
    await app.result("l3");
    const snapshot = (await app.resume("l3")).getSnapshot();
    const result = snapshot.context.messages.find((m: { role: string }) => m.role === "tool");
    expect(JSON.stringify(result?.content)).toMatch(/Invalid input for tool \\"researcher\\".*question/);
    expect(calls.research).toBe(0);
    expect(await app.executions({ root: "l3" })).toHaveLength(1);
    await app.close();
  });

  it("refuses a bad agentTool at definition, naming the option", () => {
    expect(() => agentTool({} as never, { description: "x" })).toThrow(ConfigError);
    expect(() => agentTool(researcher, { description: "" })).toThrow(/agentTool\.description/);
    expect(() => agentTool(researcher, { description: "x", name: "has space" })).toThrow(/agentTool\.name/);
    expect(() => agentTool(researcher, { description: "x", inputSchema: 5 as never })).toThrow(
      /agentTool\.inputSchema/,
    );
  });
});
