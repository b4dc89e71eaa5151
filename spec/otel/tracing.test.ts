// loomwork/otel with the OpenTelemetry SDK's in-memory exporter: a span per execution joined to the
// caller's trace, a child per macrostep and per live step, GenAI attributes on model steps, no payloads
// unless asked, and no step span for what a resume serves from the journal.
import { context, SpanKind } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MockLanguageModelV4 } from "ai-v7/test";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { instrumentApp } from "../../adapters/otel/index.js";
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  memoryStores,
  scriptedModel,
  type Model,
  type Stores,
} from "../../index.js";
import { parent } from "../children/machines.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer("spec");
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => void context.setGlobalContextManager(contextManager.enable()));
afterAll(() => {
  contextManager.disable();
  context.disable();
});
beforeEach(() => exporter.reset());

const researcher = agentLoop$({ id: "researcher", model: "model", tools: ["search"], warnTranscriptBytes: false });
const replies = () => [
  {
    toolCalls: [{ toolName: "search", input: { q: "owls" } }],
    usage: { inputTokens: 12, outputTokens: 5 },
    finishReason: "tool-calls",
  },
  { text: "Owls hunt by ear.", usage: { inputTokens: 30, outputTokens: 7 }, finishReason: "stop" },
];
const appOn = (stores: Stores, model: Model = scriptedModel(replies())) =>
  createApp(
    defineConfig({
      stores,
      effects: {
        model: createLlmEffect(model),
        search: createToolEffect(async ({ q }: { q: string }) => [`${q}: by ear`]),
      },
      logics: [researcher],
    }),
  );

const named = (spans: ReadableSpan[], prefix: string) => spans.filter((s) => s.name.startsWith(prefix));
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe("loomwork/otel", () => {
  it("traces an agent run under the caller's span: execution, macrosteps, model and tool steps", async () => {
    const app = appOn(memoryStores());
    const tracing = instrumentApp(app, { tracer });
    const request = await tracer.startActiveSpan("POST /research", async (span) => {
      await app.start(researcher, { executionId: "run-1", subject: "user-42", input: { prompt: "How do owls hunt?" } });
      await app.result("run-1");
      span.end();
      return span;
    });
    tracing.dispose();
    const spans = exporter.getFinishedSpans();
    const [execution] = named(spans, "invoke_agent");
    expect(execution).toBeDefined();
    expect(execution!.name).toBe("invoke_agent researcher");
    expect(execution!.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(parentOf(execution!)).toBe(request.spanContext().spanId);
    expect(execution!.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "researcher",
      "gen_ai.conversation.id": "run-1",
      // The usage of the execution's model calls, summed.
      "gen_ai.usage.input_tokens": 42,
      "gen_ai.usage.output_tokens": 12,
      "loomwork.execution.id": "run-1",
      "loomwork.logic.id": "researcher",
      "loomwork.execution.status": "done",
    });

    const chats = named(spans, "chat scripted");
    expect(chats).toHaveLength(2);
    expect(
      chats.map((s) => [s.attributes["gen_ai.usage.input_tokens"], s.attributes["gen_ai.usage.output_tokens"]]),
    ).toEqual([
      [12, 5],
      [30, 7],
    ]);
    expect(chats[0]!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "scripted",
      "gen_ai.request.model": "scripted",
      "gen_ai.response.finish_reasons": ["tool-calls"],
      "loomwork.effect.id": "model",
      "loomwork.step.ok": true,
    });
    const tools = named(spans, "execute_tool search");
    expect(tools).toHaveLength(1);
    expect(tools[0]!.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "search",
      "gen_ai.tool.type": "function",
      "gen_ai.tool.call.id": "call_0_0",
    });
    const macrosteps = named(spans, "loomwork.macrostep");
    expect(macrosteps.length).toBeGreaterThanOrEqual(4);
    for (const child of [...chats, ...tools, ...macrosteps])
      expect(parentOf(child)).toBe(execution!.spanContext().spanId);
    // No payloads by default: ids, types, timings and counts only.
    for (const span of spans) {
      const keys = Object.keys(span.attributes);
      expect(
        keys.filter((k) =>
          [
            "loomwork.input",
            "loomwork.subject",
            "loomwork.step.output",
            "loomwork.event",
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
          ].includes(k),
        ),
        span.name,
      ).toEqual([]);
    }
    await app.close();
  });

  it("records payloads only when asked", async () => {
    const app = appOn(memoryStores());
    const tracing = instrumentApp(app, { tracer, payloads: true });
    await app.start(researcher, { executionId: "run-2", subject: "user-7", input: { prompt: "owls?" } });
    await app.result("run-2");
    tracing.dispose();
    const spans = exporter.getFinishedSpans();
    expect(named(spans, "invoke_agent")[0]!.attributes).toMatchObject({
      "loomwork.subject": "user-7",
      "loomwork.input": '{"prompt":"owls?"}',
    });
    expect(named(spans, "chat")[1]!.attributes["loomwork.step.output"]).toContain("Owls hunt by ear.");
    await app.close();
  });

  it("records prompts and outputs in the GenAI conventions' attributes only when asked (captureMessageContent)", async () => {
    const app = appOn(memoryStores());
    const tracing = instrumentApp(app, { tracer, captureMessageContent: true });
    await app.start(researcher, { executionId: "run-5", input: { prompt: "How do owls hunt?" } });
    await app.result("run-5");
    tracing.dispose();
    const spans = exporter.getFinishedSpans();
    expect(JSON.parse(String(named(spans, "invoke_agent")[0]!.attributes["gen_ai.input.messages"]))).toEqual([
      { role: "user", parts: [{ type: "text", content: "How do owls hunt?" }] },
    ]);
    const chats = named(spans, "chat");
    expect(JSON.parse(String(chats[0]!.attributes["gen_ai.output.messages"]))).toEqual([
      {
        role: "assistant",
        parts: [{ type: "tool_call", id: "call_0_0", name: "search", arguments: { q: "owls" } }],
        finish_reason: "tool-calls",
      },
    ]);
    expect(JSON.parse(String(chats[1]!.attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "Owls hunt by ear." }], finish_reason: "stop" },
    ]);
    const [tool] = named(spans, "execute_tool");
    expect(tool!.attributes).toMatchObject({
      "gen_ai.tool.call.arguments": '{"q":"owls"}',
      "gen_ai.tool.call.result": '["owls: by ear"]',
    });
    // The loomwork payloads stay off: they are their own option.
    expect(named(spans, "invoke_agent")[0]!.attributes["loomwork.input"]).toBeUndefined();
    await app.close();
  });

  it("names a model span after the AI SDK model fromAiSdk calls: provider, request and response model, response id", async () => {
    const model = new MockLanguageModelV4({
      provider: "openai.responses",
      modelId: "gpt-5-mini",
      doGenerate: async () => ({
        content: [{ type: "text", text: "Owls hunt by ear." }],
        finishReason: { unified: "stop", raw: "completed" },
        usage: {
          inputTokens: { total: 11, noCache: 11, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 4, text: 4, reasoning: 0 },
        },
        response: { id: "resp_123", modelId: "gpt-5-mini-2025-08-07", timestamp: new Date(0) },
        warnings: [],
      }),
    });
    const app = appOn(memoryStores(), fromAiSdk(model, { stream: false }));
    const tracing = instrumentApp(app, { tracer });
    await app.start(researcher, { executionId: "run-6", input: { prompt: "owls?" } });
    await app.result("run-6");
    tracing.dispose();
    // The reply journals the response's id and model.
    const log = await app.log("run-6");
    const step = log.find((r) => r.type === "loom.step.completed" && r.stepId === "researcher#turn:0:model");
    expect(step && "output" in step ? step.output : undefined).toMatchObject({
      response: { id: "resp_123", modelId: "gpt-5-mini-2025-08-07" },
    });
    const [chat] = named(exporter.getFinishedSpans(), "chat");
    expect(chat!.name).toBe("chat gpt-5-mini");
    expect(chat!.kind).toBe(SpanKind.CLIENT);
    expect(chat!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-5-mini",
      "gen_ai.response.model": "gpt-5-mini-2025-08-07",
      "gen_ai.response.id": "resp_123",
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": 11,
      "gen_ai.usage.output_tokens": 4,
    });
    await app.close();
  });

  it("makes no step span for what a resume serves from the journal, and marks the execution resumed", async () => {
    const stores = memoryStores();
    const first = appOn(stores);
    await first.start(researcher, { executionId: "run-3", input: { prompt: "owls?" } });
    await first.result("run-3");
    await first.close();
    const second = appOn(stores);
    const tracing = instrumentApp(second, { tracer });
    const actor = await second.resume("run-3");
    expect(actor.getSnapshot().status).toBe("done");
    tracing.dispose();
    const spans = exporter.getFinishedSpans();
    expect(named(spans, "chat")).toEqual([]);
    expect(named(spans, "execute_tool")).toEqual([]);
    expect(named(spans, "loomwork.step")).toEqual([]);
    await second.close();
  });

  it("ends a failed execution's span with an error status", async () => {
    const app = appOn(memoryStores(), scriptedModel([{ toolCalls: [{ toolName: "search", input: { q: "x" } }] }]));
    const tracing = instrumentApp(app, { tracer });
    await app.start(researcher, { executionId: "run-4", input: { prompt: "x" } });
    await app.result("run-4").catch(() => undefined);
    tracing.dispose();
    const [execution] = named(exporter.getFinishedSpans(), "invoke_agent");
    expect(execution!.attributes["loomwork.execution.status"]).toBe("error");
    expect(execution!.status.code).toBe(2);
    await app.close();
  });

  it("nests a child execution's span under its parent's step, and its steps under it", async () => {
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { double: createToolEffect(async (n: number) => n * 2) },
      }),
    );
    const tracing = instrumentApp(app, { tracer });
    await app.start(parent, { executionId: "tree-1" });
    await app.result("tree-1");
    tracing.dispose();
    const spans = exporter.getFinishedSpans();
    const parentSpan = spans.find(
      (s) => s.attributes["loomwork.execution.id"] === "tree-1" && s.name.startsWith("loomwork.execution"),
    );
    const childStep = spans.find(
      (s) => s.name.startsWith("loomwork.step") && s.attributes["loomwork.step.id"] === "parent#w:1",
    );
    const childSpan = spans.find(
      (s) => s.attributes["loomwork.execution.id"] === "tree-1/w" && s.name.startsWith("loomwork.execution"),
    );
    const grandStep = spans.find(
      (s) => s.name.startsWith("execute_tool") && s.attributes["loomwork.effect.id"] === "double",
    );
    expect(parentSpan && childStep && childSpan && grandStep).toBeTruthy();
    expect(childStep!.name).toBe("loomwork.step loom.child");
    expect(named(spans, "loomwork.step loom.child")).toHaveLength(1);
    expect(parentOf(childStep!)).toBe(parentSpan!.spanContext().spanId);
    expect(parentOf(childSpan!)).toBe(childStep!.spanContext().spanId);
    expect(parentOf(grandStep!)).toBe(childSpan!.spanContext().spanId);
    expect(childSpan!.spanContext().traceId).toBe(parentSpan!.spanContext().traceId);
    expect(childSpan!.attributes["loomwork.parent.execution.id"]).toBe("tree-1");
    expect(childSpan!.attributes["loomwork.root.execution.id"]).toBe("tree-1");
  });
});
