// loomwork/otel with the OpenTelemetry SDK's in-memory exporter: a span per execution joined to the
// caller's trace, a child per macrostep and per live step, GenAI attributes on model steps, no payloads
// unless asked, and no step span for what a resume serves from the journal.
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { instrumentApp } from "../../adapters/otel/index.js";
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  memoryStores,
  scriptedModel,
  type Stores,
} from "../../index.js";

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
  { toolCalls: [{ toolName: "search", input: { q: "owls" } }], usage: { inputTokens: 12, outputTokens: 5 } },
  { text: "Owls hunt by ear.", usage: { inputTokens: 30, outputTokens: 7 } },
];
const appOn = (stores: Stores, model = scriptedModel(replies())) =>
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
    const [execution] = named(spans, "loomwork.execution");
    expect(execution).toBeDefined();
    expect(execution!.name).toBe("loomwork.execution researcher");
    expect(execution!.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(parentOf(execution!)).toBe(request.spanContext().spanId);
    expect(execution!.attributes).toMatchObject({
      "loomwork.execution.id": "run-1",
      "loomwork.logic.id": "researcher",
      "loomwork.execution.status": "done",
    });

    const chats = named(spans, "chat model");
    expect(chats).toHaveLength(2);
    expect(
      chats.map((s) => [s.attributes["gen_ai.usage.input_tokens"], s.attributes["gen_ai.usage.output_tokens"]]),
    ).toEqual([
      [12, 5],
      [30, 7],
    ]);
    expect(chats[0]!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "loomwork.effect.id": "model",
      "loomwork.step.ok": true,
    });
    const tools = named(spans, "loomwork.step search");
    expect(tools).toHaveLength(1);
    const macrosteps = named(spans, "loomwork.macrostep");
    expect(macrosteps.length).toBeGreaterThanOrEqual(4);
    for (const child of [...chats, ...tools, ...macrosteps])
      expect(parentOf(child)).toBe(execution!.spanContext().spanId);
    // No payloads by default: ids, types, timings and counts only.
    for (const span of spans) {
      const keys = Object.keys(span.attributes);
      expect(
        keys.filter((k) =>
          ["loomwork.input", "loomwork.subject", "loomwork.step.output", "loomwork.event"].includes(k),
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
    expect(named(spans, "loomwork.execution")[0]!.attributes).toMatchObject({
      "loomwork.subject": "user-7",
      "loomwork.input": '{"prompt":"owls?"}',
    });
    expect(named(spans, "chat model")[1]!.attributes["loomwork.step.output"]).toContain("Owls hunt by ear.");
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
    expect(named(spans, "loomwork.step")).toEqual([]);
    await second.close();
  });

  it("ends a failed execution's span with an error status", async () => {
    const app = appOn(memoryStores(), scriptedModel([{ toolCalls: [{ toolName: "search", input: { q: "x" } }] }]));
    const tracing = instrumentApp(app, { tracer });
    await app.start(researcher, { executionId: "run-4", input: { prompt: "x" } });
    await app.result("run-4").catch(() => undefined);
    tracing.dispose();
    const [execution] = named(exporter.getFinishedSpans(), "loomwork.execution");
    expect(execution!.attributes["loomwork.execution.status"]).toBe("error");
    expect(execution!.status.code).toBe(2);
    await app.close();
  });
});
