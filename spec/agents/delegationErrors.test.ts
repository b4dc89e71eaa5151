// Bad input of delegation (issue 34): a delegation deeper than execution.children.maxDepth is refused as the call's
// result, naming the child execution and the limit, with nothing started; a resuming app whose definition of the
// lead lacks the agent tool its log used fails with typed errors naming what is missing, and writes nothing.
import { describe, expect, it } from "vitest";
import {
  agentLoop$,
  agentTool,
  ConfigError,
  createApp,
  createLlmEffect,
  defineConfig,
  memoryStores,
  NonDeterminismError,
  scriptedModel,
  type ModelRequest,
} from "../../index.js";

const leaf = agentLoop$({ id: "leaf", model: "m", warnTranscriptBytes: false });
const middle = agentLoop$({
  id: "middle",
  model: "m",
  tools: [agentTool(leaf, { description: "the leaf" })],
  warnTranscriptBytes: false,
});
const top = agentLoop$({
  id: "top",
  model: "m",
  tools: [agentTool(middle, { description: "the middle" })],
  warnTranscriptBytes: false,
});

// Each agent delegates to its one tool, if it has one, and answers with what came back.
const delegating = (block?: () => Promise<void>) =>
  createLlmEffect(
    scriptedModel(async (request: ModelRequest) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `answer: ${JSON.stringify(last.content)}` };
      const tool = request.tools?.[0]?.name;
      if (tool) return { toolCalls: [{ toolName: tool, input: { prompt: "go" } }] };
      await block?.();
      return { text: "leaf answer" };
    }),
  );

describe("delegation refused", () => {
  it("answers a delegation past maxDepth with the limit, starting nothing", async () => {
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { m: delegating() },
        execution: { children: { maxDepth: 1 } },
      }),
    );
    await app.start(top, { executionId: "d1", input: { prompt: "x" } });
    const output = (await app.result("d1")) as { text: string };
    expect(output.text).toContain('Child execution \\\\\\"d1/tool:0:0/tool:0:0\\\\\\" would be 2 levels deep');
    expect(output.text).toContain("execution.children.maxDepth (1)");
    expect((await app.executions({ root: "d1" })).map((info) => info.executionId)).toEqual(["d1", "d1/tool:0:0"]);
    await app.close();
  });

  it("fails the resume of a tree whose agent tool the resuming definition lacks, naming it, writing nothing", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let blocked = 0;
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: { m: delegating(() => (blocked++, gate)) } }));
    await app.start(top, { executionId: "d2", input: { prompt: "x" } });
    const deadline = Date.now() + 20_000;
    while (blocked < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(blocked).toBe(1);
    await app.close();
    release();

    const heads = async () =>
      Promise.all(["d2", "d2/tool:0:0", "d2/tool:0:0/tool:0:0"].map((id) => stores.events.head(id)));
    const before = await heads();
    const changed = agentLoop$({ id: "top", model: "m", tools: [], warnTranscriptBytes: false });
    const again = createApp(defineConfig({ stores, effects: { m: delegating() }, logics: [changed] }));
    const { failed } = await again.resumeUnfinished();
    const byId = new Map(failed.map((f) => [f.executionId, f.error]));
    expect(byId.get("d2")).toBeInstanceOf(NonDeterminismError);
    expect(byId.get("d2/tool:0:0")).toBeInstanceOf(ConfigError);
    expect(String(byId.get("d2/tool:0:0"))).toContain('runs logic "middle", which this app does not know');
    expect(String(byId.get("d2/tool:0:0/tool:0:0"))).toContain('runs logic "leaf"');
    expect(await heads()).toEqual(before);
    await again.close();
  });
});
