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
}

/** What `instrumentApp` returns: `dispose()` stops tracing and ends the spans still open. */
export interface Instrumentation {
  dispose(): void;
}

const MAX_PAYLOAD = 2_000;

/**
 * Traces an app with OpenTelemetry. Each execution run in this app is a span (`loomwork.execution`),
 * joined to the caller's trace (the context active when `app.start` or `app.resume` journaled its first
 * record), with a child span per macrostep (`loomwork.macrostep`) and per step run live through the effect
 * chain (`loomwork.step`). A model step carries the GenAI semantic-convention attributes: the model,
 * input and output tokens, and the finish reason. Steps served from the journal on a resume make no span:
 * nothing ran.
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
  const executions = new Map<string, { span: Span; context: Context }>();
  const isModel = (effectId: string) => app.config.effects[effectId]?.kind === "llm";

  const executionOf = (executionId: string, first: JournalRecord | undefined) => {
    let open = executions.get(executionId);
    if (!open) {
      const attributes: Attributes = { "loomwork.execution.id": executionId };
      if (first?.type === EXECUTION_STARTED) {
        if (first.logicId !== undefined) attributes["loomwork.logic.id"] = first.logicId;
        if (payloads && first.subject !== undefined) attributes["loomwork.subject"] = first.subject;
        if (payloads && first.input !== undefined) attributes["loomwork.input"] = json(first.input);
      } else {
        attributes["loomwork.execution.resumed"] = true;
      }
      const span = tracer.startSpan(`loomwork.execution ${String(attributes["loomwork.logic.id"] ?? executionId)}`, {
        kind: SpanKind.INTERNAL,
        attributes,
      });
      open = { span, context: trace.setSpan(context.active(), span) };
      executions.set(executionId, open);
    }
    return open;
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
      if (ran) endStep(ran, first.type === STEP_COMPLETED ? first.output : undefined);
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

  const endStep = (
    { executionId, stepId, effectId, ok, durationMs, usage, stoppedAt, outcome, end }: RanStep,
    reply: unknown,
  ) => {
    const parent = executionOf(executionId, undefined);
    const attributes: Attributes = {
      "loomwork.execution.id": executionId,
      "loomwork.step.id": stepId,
      "loomwork.effect.id": effectId,
      "loomwork.step.ok": ok,
    };
    if (outcome !== undefined) attributes["loomwork.step.outcome"] = outcome;
    if (stoppedAt !== undefined) attributes["loomwork.step.stopped_at"] = stoppedAt;
    const model = isModel(effectId);
    if (model) {
      attributes["gen_ai.operation.name"] = "chat";
      if (usage) {
        attributes["gen_ai.usage.input_tokens"] = usage.inputTokens;
        attributes["gen_ai.usage.output_tokens"] = usage.outputTokens;
      }
    }
    if (model && isObject(reply)) {
      const modelId = reply.modelId ?? (isObject(reply.response) ? reply.response.modelId : undefined);
      if (typeof modelId === "string") attributes["gen_ai.response.model"] = modelId;
      if (typeof reply.finishReason === "string") attributes["gen_ai.response.finish_reasons"] = [reply.finishReason];
    }
    if (payloads && reply !== undefined) attributes["loomwork.step.output"] = json(reply);
    const span = tracer.startSpan(
      model ? `chat ${effectId}` : `loomwork.step ${effectId}`,
      { kind: model ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes, startTime: end - durationMs },
      parent.context,
    );
    if (!ok)
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: stoppedAt ? `stopped at ${stoppedAt}` : "the step failed",
      });
    span.end(end);
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
    const open = executions.get(executionId);
    if (!open) return;
    executions.delete(executionId);
    open.span.setAttribute("loomwork.execution.status", status);
    if (status === "error") open.span.setStatus({ code: SpanStatusCode.ERROR, message: "the execution failed" });
    open.span.end();
  });

  return {
    dispose() {
      offAppend();
      offStep();
      offEnded();
      flushSteps();
      for (const { span } of executions.values()) span.end();
      executions.clear();
    },
  };
}

function json(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_PAYLOAD ? `${text.slice(0, MAX_PAYLOAD)}…` : text;
}
