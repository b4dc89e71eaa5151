// Handoffs (issue 34): `agentLoop$({ handoffs: [writer] })`. The model's call of `transfer_to_writer` ends the turn
// once its other calls are answered, and the writer continues the conversation as a child execution; its answer is
// the run's answer. A resume after a crash continues in the agent that held the conversation; the handoff carries
// the transcript's taint; a second handoff in one turn is refused as the call's result; bad config is a typed error.
import { describe, expect, it } from "vitest";
import {
  agentLoop$,
  ConfigError,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  handoff,
  memoryStores,
  scriptedModel,
  type ModelRequest,
} from "../../index.js";
import { tainted } from "../../machines/helpers/taint.js";
import { EXECUTION_STARTED } from "../../stores/schema.js";

const writer = agentLoop$({
  id: "writer",
  model: "writerModel",
  system: "You write the final answer.",
  warnTranscriptBytes: false,
});
const lead = agentLoop$({
  id: "lead",
  model: "leadModel",
  system: "You research, then hand off.",
  tools: ["search"],
  handoffs: [handoff(writer, { description: "When the research is done" })],
  warnTranscriptBytes: false,
});

function counted(block?: () => Promise<void>) {
  const calls = { lead: 0, writer: 0, search: 0 };
  const requests: { lead: ModelRequest[]; writer: ModelRequest[] } = { lead: [], writer: [] };
  const effects = {
    leadModel: createLlmEffect(
      scriptedModel((request) => {
        calls.lead++;
        requests.lead.push(request);
        return {
          toolCalls: [
            { toolName: "search", input: { q: "owls" } },
            { toolName: "transfer_to_writer", input: {} },
          ],
          usage: { inputTokens: 10, outputTokens: 2 },
        };
      }),
    ),
    writerModel: createLlmEffect(
      scriptedModel(async (request) => {
        calls.writer++;
        requests.writer.push(request);
        await block?.();
        const found = request.messages.find((m) => m.role === "tool" && m.toolName === "search");
        return { text: `final: ${JSON.stringify(found?.content)}`, usage: { inputTokens: 3, outputTokens: 1 } };
      }),
    ),
    search: createToolEffect(async ({ q }: { q: string }) => (calls.search++, tainted(`${q} hunt by night`, "web"))),
  };
  return { calls, requests, effects };
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in 20 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("handoffs", () => {
  it("hands the conversation to the agent, whose answer is the run's, carrying the transcript and its taint", async () => {
    const { calls, requests, effects } = counted();
    const app = createApp(defineConfig({ stores: memoryStores(), effects }));
    await app.start(lead, { executionId: "h1", input: { prompt: "Tell me about owls" } });
    const output = (await app.result("h1")) as Record<string, unknown>;
    expect(output).toMatchObject({ lastAgent: "writer", turns: 2, sawTaintFrom: ["web"] });
    expect(String(output.text)).toContain("owls hunt by night");
    expect(calls).toEqual({ lead: 1, writer: 1, search: 1 });
    // The model was told of the handoff as a tool without arguments.
    expect(requests.lead[0]!.tools?.find((t) => t.name === "transfer_to_writer")).toMatchObject({
      description: "When the research is done",
      inputSchema: { type: "object", properties: {} },
    });
    // The writer continues with the transcript under its own system prompt, the search result fenced as tainted.
    const seen = requests.writer[0]!.messages;
    expect(seen.filter((m) => m.role === "system").map((m) => m.content)).toEqual(["You write the final answer."]);
    expect(seen.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool"]);
    expect(seen.at(-1)).toMatchObject({ toolName: "transfer_to_writer", content: { transferredTo: "writer" } });
    expect(JSON.stringify(seen[3]!.content)).toContain("untrusted");
    // One tree: the lead and the writer as its child execution, started with the transcript.
    expect((await app.executions({ root: "h1" })).map((info) => info.executionId)).toEqual(["h1", "h1/handoff"]);
    const started = (await app.log("h1/handoff"))[0];
    expect(started).toMatchObject({ type: EXECUTION_STARTED, logicId: "writer" });
    expect(await app.usage("h1")).toMatchObject({ modelCalls: 2, totalTokens: 16 });
    await app.close();
  });

  it("resumes mid-handoff in the agent that held the conversation: no recorded call of either agent runs again", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const stores = memoryStores();
    const first = counted(() => gate);
    const app = createApp(defineConfig({ stores, effects: first.effects }));
    await app.start(lead, { executionId: "h2", input: { prompt: "Tell me about owls" } });
    await until(() => first.calls.writer === 1);
    await app.close();
    release();

    const second = counted();
    const again = createApp(defineConfig({ stores, effects: second.effects, logics: [lead, writer] }));
    expect((await again.resumeUnfinished()).failed).toEqual([]);
    const output = (await again.result("h2")) as Record<string, unknown>;
    expect(output).toMatchObject({ lastAgent: "writer", sawTaintFrom: ["web"] });
    expect(String(output.text)).toContain("owls hunt by night");
    // Only the writer's call that had no outcome ran again.
    expect(second.calls).toEqual({ lead: 0, writer: 1, search: 0 });
    await again.close();
  });

  it("takes the first of two handoffs in one turn and answers the second with an error", async () => {
    const editor = agentLoop$({ id: "editor", model: "writerModel", warnTranscriptBytes: false });
    const both = agentLoop$({
      id: "both",
      model: "leadModel",
      handoffs: [writer, editor],
      warnTranscriptBytes: false,
    });
    const effects = {
      leadModel: createLlmEffect(
        scriptedModel([
          {
            toolCalls: [
              { toolName: "transfer_to_editor", input: {} },
              { toolName: "transfer_to_writer", input: {} },
            ],
          },
        ]),
      ),
      writerModel: createLlmEffect(scriptedModel(() => ({ text: "edited" }))),
    };
    const app = createApp(defineConfig({ stores: memoryStores(), effects }));
    await app.start(both, { executionId: "h3", input: { prompt: "go" } });
    expect(await app.result("h3")).toMatchObject({ text: "edited", lastAgent: "editor" });
    const child = (await app.log("h3/handoff"))[0] as { input: { messages: { role: string; content: unknown }[] } };
    expect(child.input.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      { transferredTo: "editor" },
      {
        error: 'Only one handoff per turn: this one was not taken; the conversation goes to "editor".',
      },
    ]);
    await app.close();
  });

  it("passes on what inputFilter keeps, and fails the run naming the agent when the agent fails", async () => {
    const failing = agentLoop$({ id: "failing", model: "writerModel", warnTranscriptBytes: false });
    const filtered = agentLoop$({
      id: "filtered",
      model: "leadModel",
      handoffs: [
        handoff(failing, {
          inputFilter: (messages) => messages.filter((m) => m.role === "user"),
        }),
      ],
      warnTranscriptBytes: false,
    });
    const seen: ModelRequest[] = [];
    const effects = {
      leadModel: createLlmEffect(scriptedModel([{ toolCalls: [{ toolName: "transfer_to_failing", input: {} }] }])),
      writerModel: createLlmEffect(
        scriptedModel((request) => {
          seen.push(request);
          throw new Error("the writer's provider is down");
        }),
      ),
    };
    const app = createApp(defineConfig({ stores: memoryStores(), effects }));
    await app.start(filtered, { executionId: "h4", input: { prompt: "only this" } });
    await expect(app.result("h4")).rejects.toThrow(/"failing" this run handed off to failed/);
    expect(seen[0]!.messages).toEqual([{ role: "user", content: "only this" }]);
    await app.close();
  });

  it("answers a handoff to an agent the loop does not have as an unknown tool, starting nothing", async () => {
    const effects = {
      leadModel: createLlmEffect(
        scriptedModel((request) =>
          request.messages.some((m) => m.role === "tool")
            ? { text: `gave up: ${JSON.stringify(request.messages.at(-1)?.content)}` }
            : { toolCalls: [{ toolName: "transfer_to_billing", input: {} }] },
        ),
      ),
      writerModel: createLlmEffect(scriptedModel(() => ({ text: "never" }))),
      search: createToolEffect(async () => "none"),
    };
    const app = createApp(defineConfig({ stores: memoryStores(), effects }));
    await app.start(lead, { executionId: "h5", input: { prompt: "refund me" } });
    expect(await app.result("h5")).toEqual(
      expect.objectContaining({ text: 'gave up: {"error":"unknown tool \\"transfer_to_billing\\""}' }),
    );
    expect((await app.executions({ root: "h5" })).map((info) => info.executionId)).toEqual(["h5"]);
    await app.close();
  });

  it("refuses bad handoffs config with typed errors", () => {
    expect(() => handoff({} as never)).toThrow(ConfigError);
    expect(() => handoff(writer, { name: "transfer to writer" })).toThrow(/handoff.name/);
    expect(() => handoff(writer, { inputFilter: "all" as never })).toThrow(/handoff.inputFilter/);
    expect(() => agentLoop$({ id: "x", model: "m", handoffs: writer as never })).toThrow(/agentLoop\$.handoffs/);
    expect(() => agentLoop$({ id: "x", model: "m", handoffs: [{} as never] })).toThrow(/agentLoop\$.handoffs/);
    expect(() => agentLoop$({ id: "x", model: "m", tools: ["transfer_to_writer"], handoffs: [writer] })).toThrow(
      /two tools or handoffs are named "transfer_to_writer"/,
    );
  });
});
