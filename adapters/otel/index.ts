// loomwork/otel: OpenTelemetry spans for an app's executions, macrosteps and steps, from the app's own
// events (app.on). @opentelemetry/api is an optional peer dependency of this entry point only; the app
// runs the same with or without it.
import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import type { App } from "../../actors/app.js";
import type { ModelInfo } from "../../actors/effects/effect.js";
import type { Usage } from "../../machines/helpers/messages.js";
import type { RuntimeEvents } from "../../actors/bus.js";
import type { JournalRecord } from "../../stores/types.js";
import {
  EVENT_RECEIVED,
  EXECUTION_STARTED,
  isMacrostepInput,
  STEP_COMPLETED,
  STEP_FAILED,
} from "../../stores/schema.js";
import { isObject } from "../../stores/shapes.js";
import { CHILD_EFFECT_ID } from "../../actors/journal/children.js";

/** Options of `instrumentApp`. */
export interface InstrumentOptions {
  /** The tracer to use. @defaultValue `trace.getTracer("loomwork")` from the global provider */
  tracer?: Tracer;
  /**
   * Also record payloads: the start input, events and step outputs (as JSON, cut to 2,000 characters),
   * and the subject. Off by default: spans then carry ids, types, timings and counts only.
   * @defaultValue false
   */
  payloads?: boolean;
  /**
   * Record prompts and outputs in the GenAI semantic conventions' opt-in attributes (what their
   * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` turns on): an agent's prompt
   * (`gen_ai.input.messages` on `invoke_agent`), each model reply (`gen_ai.output.messages` on `chat`), each
   * tool call's arguments and result (`gen_ai.tool.call.arguments` / `.result` on `execute_tool`), as JSON
   * cut to 2,000 characters. Off by default: the conventions call this content sensitive.
   * @defaultValue false
   */
  captureMessageContent?: boolean;
}

/** What `instrumentApp` returns: `dispose()` stops tracing and ends the spans still open. */
export interface Instrumentation {
  dispose(): void;
}

const MAX_PAYLOAD = 2_000;

// A model step's step id: `<loop>#turn:<i>:model` (the agent loop's spelling, machines/helpers/agentIds.ts).
const MODEL_STEP = /^(.*)#turn:(\d+):model$/;

interface OpenExecution {
  span: Span;
  context: Context;
  executionId: string;
  logicId?: string;
  prompt?: string;
  agent: boolean;
  inputTokens: number;
  outputTokens: number;
}

/** A model turn's tool calls as the agent loop names them: by the tool step each runs as. */
type CallsByStep = Map<string, { id: string; toolName: string; input: unknown }>;

/**
 * Traces an app with OpenTelemetry, after the GenAI semantic conventions. Each execution run in this app is
 * a span, joined to the caller's trace (the context active when `app.start` or `app.resume` journaled its
 * first record): `invoke_agent <name>` for an agent (an execution that calls a model), with its summed
 * usage, else `loomwork.execution <logic id>`. Its children: a span per macrostep (`loomwork.macrostep`),
 * per model call (`chat <model>`: provider, request and response model, response id, usage, finish
 * reasons), per tool call (`execute_tool <name>`: the tool's name and call id) and per other step
 * (`loomwork.step`), each run live through the effect chain. Steps served from the journal on a resume
 * make no span: nothing ran.
 *
 * @example
 * import { instrumentApp } from "loomwork/otel";
 * const tracing = instrumentApp(app); // the global tracer provider's "loomwork" tracer
 * // ...
 * tracing.dispose();
 */
export function instrumentApp(app: Pick<App, "on" | "config">, options: InstrumentOptions = {}): Instrumentation {
  const tracer = options.tracer ?? trace.getTracer("loomwork");
  const payloads = options.payloads === true;
  const content = options.captureMessageContent === true;
  const executions = new Map<string, OpenExecution>();
  // Per execution, the tool calls of its model turns, by the tool step each runs as.
  const calls = new Map<string, CallsByStep>();
  const effectOf = (effectId: string) => app.config.effects[effectId];

  // A child execution's step in its parent (effect `loom.child`), open from the child's start to the step's outcome,
  // so the child's spans nest under it; keyed `<parent id> <step id>`.
  const childSteps = new Map<string, Span>();
  const childStepOf = (link: { executionId: string; stepId: string }) => {
    const key = `${link.executionId} ${link.stepId}`;
    let span = childSteps.get(key);
    if (!span) {
      const attributes: Attributes = {
        "loomwork.execution.id": link.executionId,
        "loomwork.step.id": link.stepId,
        "loomwork.effect.id": CHILD_EFFECT_ID,
      };
      span = tracer.startSpan(
        `loomwork.step ${CHILD_EFFECT_ID}`,
        { attributes },
        executionOf(link.executionId, undefined).context,
      );
      childSteps.set(key, span);
    }
    return span;
  };

  const executionOf = (executionId: string, first: JournalRecord | undefined) => {
    let open = executions.get(executionId);
    if (!open) {
      const attributes: Attributes = { "loomwork.execution.id": executionId };
      const started = first?.type === EXECUTION_STARTED ? first : undefined;
      let within = context.active();
      if (started) {
        if (started.logicId !== undefined) attributes["loomwork.logic.id"] = started.logicId;
        if (payloads && started.subject !== undefined) attributes["loomwork.subject"] = started.subject;
        if (payloads && started.input !== undefined) attributes["loomwork.input"] = json(started.input);
        const link = parentLinkOf(started.parent);
        if (link) {
          // A child execution: under its parent's step, in its root's trace.
          attributes["loomwork.parent.execution.id"] = link.executionId;
          if (typeof started.root === "string") attributes["loomwork.root.execution.id"] = started.root;
          within = trace.setSpan(context.active(), childStepOf(link));
        }
      } else {
        attributes["loomwork.execution.resumed"] = true;
      }
      const span = tracer.startSpan(
        `loomwork.execution ${started?.logicId ?? executionId}`,
        { kind: SpanKind.INTERNAL, attributes },
        within,
      );
      const prompt = started && isObject(started.input) ? started.input.prompt : undefined;
      open = {
        span,
        context: trace.setSpan(context.active(), span),
        executionId,
        ...(started?.logicId === undefined ? {} : { logicId: started.logicId }),
        ...(typeof prompt === "string" ? { prompt } : {}),
        agent: false,
        inputTokens: 0,
        outputTokens: 0,
      };
      executions.set(executionId, open);
    }
    return open;
  };

  // An execution that calls a model is an agent's invocation: `invoke_agent <name>`, named after its logic
  // (or, resumed here without its first record, after the machine its model steps belong to).
  const asAgent = (open: OpenExecution, stepId: string) => {
    if (open.agent) return;
    open.agent = true;
    const name = open.logicId ?? MODEL_STEP.exec(stepId)?.[1];
    open.span.updateName(name ? `invoke_agent ${name}` : "invoke_agent");
    open.span.setAttributes({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.conversation.id": open.executionId,
      ...(name ? { "gen_ai.agent.name": name } : {}),
    });
    if (content && open.prompt !== undefined)
      open.span.setAttribute(
        "gen_ai.input.messages",
        json([{ role: "user", parts: [{ type: "text", content: open.prompt }] }]),
      );
  };

  // A model turn's tool calls, with the ids the agent loop gives them (the provider's when unique in the
  // turn, else `call_<turn>_<j>`), keyed by the tool step each runs as.
  const rememberCalls = (executionId: string, stepId: string, reply: unknown) => {
    const turn = MODEL_STEP.exec(stepId);
    if (!turn || !isObject(reply) || !Array.isArray(reply.toolCalls)) return;
    const given: unknown[] = reply.toolCalls;
    const ids = given.map((c) => (isObject(c) && typeof c.id === "string" && c.id !== "" ? c.id : undefined));
    let byStep = calls.get(executionId);
    if (!byStep) calls.set(executionId, (byStep = new Map()));
    given.forEach((call, j) => {
      if (!isObject(call)) return;
      const id = ids[j] !== undefined && ids.indexOf(ids[j]) === j ? ids[j] : `call_${turn[2]}_${j}`;
      byStep.set(`${turn[1]}#turn:${turn[2]}:tool:${j}`, {
        id,
        toolName: typeof call.toolName === "string" ? call.toolName : "",
        input: call.input,
      });
    });
  };

  const offAppend = app.on("append", ({ executionId, records }) => {
    const first = records[0];
    const parent = executionOf(executionId, first);
    if (!first || !isMacrostepInput(first)) return;
    const attributes: Attributes = {
      "loomwork.execution.id": executionId,
      "loomwork.record.type": first.type,
      "loomwork.seq.from": first.seq,
      "loomwork.seq.to": records.at(-1)!.seq,
      "loomwork.records": records.length,
    };
    if (first.type === EVENT_RECEIVED) attributes["loomwork.event.type"] = first.event.type;
    if (payloads && first.type === EVENT_RECEIVED) attributes["loomwork.event"] = json(first.event);
    if (first.type === STEP_COMPLETED || first.type === STEP_FAILED) {
      attributes["loomwork.step.id"] = first.stepId;
      // The step ran live just before: its span now has its journaled outcome (a model's reply).
      const key = `${executionId} ${first.stepId}`;
      const ran = ranSteps.get(key);
      ranSteps.delete(key);
      const output = first.type === STEP_COMPLETED ? first.output : undefined;
      if (ran) endStep(ran, output);
      else endChildStep(executionId, first.stepId, first.type === STEP_COMPLETED);
      if (ran && effectOf(ran.effectId)?.kind === "llm") rememberCalls(executionId, first.stepId, output);
    }
    // The macrostep ran from its input's time to the durable append of its records (now).
    tracer.startSpan("loomwork.macrostep", { attributes, startTime: first.at }, parent.context).end();
  });

  // A step the chain ran, waiting for its outcome record (the bus reports the run before the journal has it).
  type RanStep = Parameters<RuntimeEvents["step"]>[0] & { end: number };
  const ranSteps = new Map<string, RanStep>();
  const offStep = app.on("step", (event) =>
    ranSteps.set(`${event.executionId} ${event.stepId}`, { ...event, end: Date.now() }),
  );

  const endStep = (ran: RanStep, output: unknown) => {
    const { executionId, stepId, effectId, ok, durationMs, stoppedAt, outcome, end } = ran;
    const parent = executionOf(executionId, undefined);
    const attributes: Attributes = {
      "loomwork.execution.id": executionId,
      "loomwork.step.id": stepId,
      "loomwork.effect.id": effectId,
      "loomwork.step.ok": ok,
    };
    if (outcome !== undefined) attributes["loomwork.step.outcome"] = outcome;
    if (stoppedAt !== undefined) attributes["loomwork.step.stopped_at"] = stoppedAt;
    if (payloads && output !== undefined) attributes["loomwork.step.output"] = json(output);
    const effect = effectOf(effectId);
    let name = `loomwork.step ${effectId}`;
    let kind = SpanKind.INTERNAL;
    if (effect?.kind === "llm") {
      asAgent(parent, stepId);
      name = chatAttributes(attributes, ran, effect.model, output, parent, content);
      kind = SpanKind.CLIENT;
    } else if (effect?.kind === "tool") {
      const call = calls.get(executionId)?.get(stepId);
      calls.get(executionId)?.delete(stepId);
      name = `execute_tool ${effectId}`;
      attributes["gen_ai.operation.name"] = "execute_tool";
      attributes["gen_ai.tool.name"] = effectId;
      attributes["gen_ai.tool.type"] = "function";
      if (effect.description) attributes["gen_ai.tool.description"] = effect.description;
      if (call) attributes["gen_ai.tool.call.id"] = call.id;
      if (content && call) attributes["gen_ai.tool.call.arguments"] = json(call.input);
      if (content && output !== undefined) attributes["gen_ai.tool.call.result"] = json(output);
    }
    const span = tracer.startSpan(name, { kind, attributes, startTime: end - durationMs }, parent.context);
    if (!ok)
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: stoppedAt ? `stopped at ${stoppedAt}` : "the step failed",
      });
    span.end(end);
  };

  // A child step's outcome journaled in its parent: its span (open since the child started) ends.
  const endChildStep = (executionId: string, stepId: string, ok: boolean) => {
    const key = `${executionId} ${stepId}`;
    const span = childSteps.get(key);
    if (!span) return;
    childSteps.delete(key);
    span.setAttribute("loomwork.step.ok", ok);
    if (!ok) span.setStatus({ code: SpanStatusCode.ERROR, message: "the child execution failed" });
    span.end();
  };

  const flushSteps = (executionId?: string) => {
    for (const [key, ran] of ranSteps) {
      if (executionId !== undefined && ran.executionId !== executionId) continue;
      ranSteps.delete(key);
      endStep(ran, undefined);
    }
  };

  const offEnded = app.on("ended", ({ executionId, status }) => {
    flushSteps(executionId);
    calls.delete(executionId);
    const open = executions.get(executionId);
    if (!open) return;
    executions.delete(executionId);
    endExecution(open, status);
  });

  return {
    dispose() {
      offAppend();
      offStep();
      offEnded();
      flushSteps();
      calls.clear();
      for (const open of executions.values()) endExecution(open, undefined);
      executions.clear();
      for (const span of childSteps.values()) span.end();
      childSteps.clear();
    },
  };
}

function endExecution(open: OpenExecution, status: string | undefined): void {
  if (open.agent) {
    open.span.setAttribute("gen_ai.usage.input_tokens", open.inputTokens);
    open.span.setAttribute("gen_ai.usage.output_tokens", open.outputTokens);
  }
  if (status !== undefined) open.span.setAttribute("loomwork.execution.status", status);
  if (status === "error") open.span.setStatus({ code: SpanStatusCode.ERROR, message: "the execution failed" });
  open.span.end();
}

// A model call's GenAI attributes (into `attributes`), its usage added to the execution's; returns the span name.
function chatAttributes(
  attributes: Attributes,
  ran: { stepId: string; usage?: Usage },
  model: ModelInfo | undefined,
  reply: unknown,
  execution: OpenExecution,
  content: boolean,
): string {
  const requestModel = model?.modelId ?? model?.id;
  attributes["gen_ai.operation.name"] = "chat";
  attributes["gen_ai.provider.name"] = providerNameOf(model);
  if (requestModel) attributes["gen_ai.request.model"] = requestModel;
  if (ran.usage) {
    attributes["gen_ai.usage.input_tokens"] = ran.usage.inputTokens;
    attributes["gen_ai.usage.output_tokens"] = ran.usage.outputTokens;
    execution.inputTokens += ran.usage.inputTokens;
    execution.outputTokens += ran.usage.outputTokens;
  }
  if (isObject(reply)) {
    const response = isObject(reply.response) ? reply.response : {};
    if (typeof response.modelId === "string") attributes["gen_ai.response.model"] = response.modelId;
    if (typeof response.id === "string") attributes["gen_ai.response.id"] = response.id;
    if (typeof reply.finishReason === "string") attributes["gen_ai.response.finish_reasons"] = [reply.finishReason];
    if (content)
      attributes["gen_ai.output.messages"] = json([outputMessageOf(reply, MODEL_STEP.exec(ran.stepId)?.[2])]);
  }
  return requestModel ? `chat ${requestModel}` : "chat";
}

// The conventions' provider name: the AI SDK's provider id before its first dot (`openai.responses` is
// `openai`), else the model id's prefix before a colon, else the model id (`scripted`).
function providerNameOf(model: ModelInfo | undefined): string {
  if (model?.provider) return model.provider.split(".")[0]!;
  return model?.id.split(":")[0] || "unknown";
}

// A reply as the conventions' output message: text and tool-call parts (with the ids the agent loop gives
// the calls of turn `turn`), and the finish reason.
function outputMessageOf(reply: Record<string, unknown>, turn: string | undefined): Record<string, unknown> {
  const parts: unknown[] = [];
  if (typeof reply.text === "string" && reply.text !== "") parts.push({ type: "text", content: reply.text });
  const toolCalls: unknown[] = Array.isArray(reply.toolCalls) ? reply.toolCalls : [];
  const ids = toolCalls.map((c) => (isObject(c) ? c.id : undefined));
  toolCalls.forEach((call, j) => {
    if (!isObject(call)) return;
    const own = typeof call.id === "string" && call.id !== "" && ids.indexOf(call.id) === j ? call.id : undefined;
    const id = own ?? (turn === undefined ? undefined : `call_${turn}_${j}`);
    parts.push({ type: "tool_call", ...(id ? { id } : {}), name: call.toolName, arguments: call.input });
  });
  return {
    role: "assistant",
    parts,
    ...(typeof reply.finishReason === "string" ? { finish_reason: reply.finishReason } : {}),
  };
}

function json(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_PAYLOAD ? `${text.slice(0, MAX_PAYLOAD)}…` : text;
}

// EXECUTION_STARTED's `parent` (a child execution's link), if it has one.
function parentLinkOf(value: unknown): { executionId: string; stepId: string } | undefined {
  return isObject(value) && typeof value.executionId === "string" && typeof value.stepId === "string"
    ? { executionId: value.executionId, stepId: value.stepId }
    : undefined;
}
