// Effects: the only I/O a journaled machine has. Registered by name in defineConfig({ effects }).
import { tainted } from "../../machines/helpers/taint.js";
import { isObject } from "../../stores/shapes.js";
import type { Clock } from "../clock.js";
import { isMcpCallToolResult, mcpToolOutput } from "./mcpResult.js";
import type { Message, ToolModelOutput } from "../../machines/helpers/messages.js";
import { projectedMessage, type ToolModelOutputOptions } from "./modelOutput.js";

export type { ToolModelOutputOptions } from "./modelOutput.js";
import type { InferSchemaInput, InferSchemaOutput, StandardSchemaV1 } from "./standardSchema.js";
import { resolveToolSchema, ToolInputError, type JsonSchema, type ResolvedToolSchema } from "./toolSchema.js";

/** What an effect is: a model call (`llm`), a tool, or a hand-written flow step (`task`). */
export type EffectKind = "llm" | "tool" | "task";

/** What an effect (and every middleware) knows about the call it serves. */
export interface EffectContext {
  executionId: string;
  /** Deterministic id of the step in its execution's journal, e.g. `researcher#turn:3:model`. */
  stepId: string;
  /** The name the effect is registered under. */
  effectId: string;
  /** How the runtime invoked it: the registered effect's kind ("tool" for agentLoop$ tool frames). */
  taskKind: EffectKind;
  subject?: string;
  /** 1 on the first run; a retry middleware increments it. */
  attempt: number;
  /** Stable across re-runs of the same step (after a crash): `<executionId>/<stepId>`. Dedupe side effects on it. */
  idempotencyKey: string;
  /** Aborted when the execution stops or the step's state is left. */
  signal: AbortSignal;
  /**
   * The role the machine declared with `invokeAs` (agentLoop$ declares every tool call "tool"); absent for a
   * plain invoke, whose `taskKind` is only the registered effect's kind. `invokedAs(ctx)` reads it.
   */
  invokedAs?: EffectKind;
  /** The app's clock (retry backoff and timeouts wait on it); absent on a context built by hand: the real clock. */
  clock?: Clock;
  /** Sends a model step's live deltas to `app.stream` subscribers (never journaled); absent outside a runtime. */
  emitDelta?: (delta: ModelDelta) => void;
  /** The effect registered under `name` (a model step reads its tools' descriptions and schemas); absent outside a runtime. */
  effectOf?: (name: string) => Effect | undefined;
}

/** One delta as a provider reports it: `type` as the AI SDK names its stream parts. */
export interface ModelDelta {
  type: string;
  /** The text of a `text-delta`, `reasoning-delta` or `tool-input-delta`. */
  delta?: string;
  /** The tool call a `tool-input-*` or `tool-call` part belongs to (the provider's id). */
  id?: string;
  toolName?: string;
  /** A `tool-call`'s parsed input. */
  input?: unknown;
}

/** The model an llm effect calls, as telemetry names it. */
export interface ModelInfo {
  /** A name for logs and metering, e.g. "scripted" or "openai.responses:gpt-5-mini". */
  readonly id: string;
  /** The provider, as the AI SDK names it (`openai.responses`, `anthropic.messages`), when known. */
  readonly provider?: string;
  /** The model the requests ask for (`gpt-5-mini`), when known. */
  readonly modelId?: string;
}

/** A registered effect. */
export interface Effect<I = any, O = any> {
  kind: EffectKind;
  /** An llm effect's model (`createLlmEffect` sets it): spans are named after it. */
  model?: ModelInfo;
  run(input: I, ctx: EffectContext): Promise<O>;
  /** The result carries media parts the loop renders; never offloaded by the claim-check (ADR 0140 D9). */
  returnsMedia?: boolean;
  /** A tool's description, sent to the model (an agent's `tools: [{ name, description }]` wins). */
  description?: string;
  /** A tool's input as JSON Schema, sent to the model; the input is validated against the declared schema before `run`. */
  inputSchema?: JsonSchema;
  /** Whether a call needs a human's approval before it runs (see docs/agents.md, "Approval"). */
  needsApproval?: boolean | ((input: unknown, ctx: EffectContext) => boolean | Promise<boolean>);
  /**
   * How the model reads a result of this tool: the tool message of a model request (fenced where tainted)
   * and the request's messages in (the call's input is read there), the message the model reads out. `createToolEffect` builds it from
   * `toModelOutput`; the journal keeps the result. Never journaled: computed for each request.
   */
  projectResult?: (message: Message, messages: readonly Message[]) => Promise<Message>;
  /**
   * Releases what the effect holds (a connection, a process) when the app that registers it closes: `app.close()`
   * calls each distinct `close` of its effects once, after its executions stopped; a throw is the warning
   * `LOOM_EFFECT_CLOSE`. `mcpTools`' effects share one, which ends the server's connection.
   */
  close?: () => Promise<void> | void;
}

/**
 * The `next` the runtime hands a middleware: it takes an optional context for the inner layers
 * (a retry passes `{ ...ctx, attempt }`, the timeout a context whose `signal` it can abort).
 */
export type Next = (input: unknown, ctx?: EffectContext) => Promise<unknown>;

/** A middleware: sees the call, may change input or output, and calls `next` (or not). */
export type EffectMiddleware = (ctx: EffectContext, input: unknown, next: Next) => Promise<unknown>;

/** Options of `createToolEffect`. */
export interface ToolOptions<I = unknown, O = unknown> {
  /** What the tool does, for the model. */
  description?: string;
  /**
   * The tool's input: a Standard Schema (zod 4, valibot, arktype; the input type is inferred from it), an
   * AI SDK `jsonSchema(...)`, or a JSON Schema object. The model receives it as JSON Schema, and each call's
   * input is validated before the tool runs: an invalid input becomes the tool's error result, which the
   * model reads and can correct (journaled like any result), never a failed run.
   */
  inputSchema?: StandardSchemaV1<unknown, I> | JsonSchema;
  /** A call parks the agent until a human approves or denies it (`TOOL_APPROVAL`); a function decides per input. */
  needsApproval?: boolean | ((input: I, ctx: EffectContext) => boolean | Promise<boolean>);
  /** The result carries media parts the loop renders; never offloaded by the claim-check. */
  returnsMedia?: boolean;
  /**
   * What the model reads of a result, as the AI SDK's `tool({ toModelOutput })`: the journal keeps the
   * result, and each model request carries this projection of it instead (`{ type: "text", value }`,
   * `{ type: "json", value }` or `{ type: "content", value: parts }`), computed again from the journal
   * after a resume, so it must be a pure function of its arguments. An error result is not projected; a
   * tainted result's projection is fenced as the result would be.
   * @defaultValue the result as it is (text, or JSON)
   */
  toModelOutput?: (options: ToolModelOutputOptions<I, O>) => ToolModelOutput | PromiseLike<ToolModelOutput>;
}

/**
 * An AI SDK tool, as `tool({ description, inputSchema, execute })` of ai 5, 6 or 7 returns it (structural:
 * no dependency on `ai`). `execute` receives `{ toolCallId, messages, abortSignal }`: `toolCallId` is the
 * loomwork step id, `messages` is empty (the transcript stays in the journal).
 */
export interface AiSdkTool<I = any, O = unknown> {
  /** A string; ai 7's `(options) => string` is called with no context. */
  description?: unknown;
  inputSchema?: unknown;
  needsApproval?: unknown;
  /** ai 6 and 7's `toModelOutput({ toolCallId, input, output })`; honoured as `ToolOptions.toModelOutput` is. */
  toModelOutput?: unknown;
  execute?(
    input: I,
    options: { toolCallId: string; messages: unknown[]; abortSignal?: AbortSignal },
  ): O | PromiseLike<O> | AsyncIterable<O>;
}

/**
 * A tool effect from a function (with an optional description, input schema and approval rule), or from
 * an AI SDK `tool({...})` as it is.
 *
 * @example
 * search: createToolEffect(async ({ q }) => hits(q), { description: "Search the web", inputSchema: z.object({ q: z.string() }) })
 * weather: createToolEffect(tool({ description: "Weather in a city", inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => forecast(city) }))
 */
export function createToolEffect<S extends StandardSchemaV1, O>(
  fn: (input: InferSchemaOutput<S>, ctx: EffectContext) => Promise<O> | O,
  options: ToolOptions<InferSchemaOutput<S>, NoInfer<O>> & { inputSchema: S },
): Effect<InferSchemaInput<S>, O>;
export function createToolEffect<I, O>(
  fn: (input: I, ctx: EffectContext) => Promise<O> | O,
  options?: ToolOptions<I, NoInfer<O>>,
): Effect<I, O>;
export function createToolEffect<I, O>(tool: AiSdkTool<I, O>): Effect<I, O>;
export function createToolEffect(
  fnOrTool: ((input: unknown, ctx: EffectContext) => unknown) | AiSdkTool<unknown, unknown>,
  options: ToolOptions<any, any> = {},
): Effect {
  if (typeof fnOrTool !== "function") return fromAiSdkTool(fnOrTool);
  const schema =
    options.inputSchema === undefined
      ? undefined
      : resolveToolSchema(options.inputSchema, "createToolEffect.inputSchema");
  return {
    kind: "tool",
    run: async (input, ctx) => fnOrTool(await validated(schema, input, ctx), ctx),
    ...(options.returnsMedia ? { returnsMedia: true } : {}),
    ...described(options.description, schema, options.needsApproval),
    ...projected(options.toModelOutput, undefined),
  };
}

function fromAiSdkTool(tool: AiSdkTool<unknown, unknown>): Effect {
  const execute = tool?.execute;
  if (typeof execute !== "function")
    throw new TypeError(
      "createToolEffect(tool): an AI SDK tool({ description, inputSchema, execute }) with an execute function.",
    );
  const schema =
    tool.inputSchema === undefined
      ? undefined
      : resolveToolSchema(tool.inputSchema, "createToolEffect(tool).inputSchema");
  const approval = tool.needsApproval;
  const origin = mcpOriginOf(tool);
  return {
    kind: "tool",
    run: async (input, ctx) => {
      const output = await lastOf(
        execute.call(tool, await validated(schema, input, ctx), {
          toolCallId: ctx.stepId,
          messages: [],
          abortSignal: ctx.signal,
        }),
      );
      if (origin === undefined) return output;
      return isMcpCallToolResult(output) ? mcpToolOutput(output, origin) : tainted(output, origin);
    },
    ...described(descriptionOf(tool), schema, approvalOf(tool, approval)),
    ...projected(tool.toModelOutput, tool),
  };
}

function projected(project: unknown, self: unknown): Pick<Effect, "projectResult"> {
  if (project === undefined) return {};
  if (typeof project !== "function")
    throw new TypeError(
      "createToolEffect: toModelOutput must be a function ({ toolCallId, input, output }) => output.",
    );
  return {
    projectResult: (message, messages) =>
      projectedMessage(message, messages, (options) => Reflect.apply(project, self, [options])),
  };
}

/**
 * The taint origin of an AI SDK tool that declares itself an MCP server's, or undefined. The rule: a tool
 * whose `metadata.clientName` is a string (what `@ai-sdk/mcp` puts on every tool it builds) is
 * `mcp:<clientName>`; one that has its own `_meta` property (the MCP protocol's metadata field, which
 * `@ai-sdk/mcp` copies onto every tool, even empty) is `mcp`. The AI SDK has no other mark of a tool's origin.
 */
export function mcpOriginOf(tool: object): string | undefined {
  const metadata: unknown = Reflect.get(tool, "metadata");
  const client = isObject(metadata) ? metadata.clientName : undefined;
  if (typeof client === "string" && client !== "") return `mcp:${client}`;
  return Object.hasOwn(tool, "_meta") ? "mcp" : undefined;
}

function descriptionOf(tool: AiSdkTool<unknown, unknown>): string | undefined {
  const description =
    typeof tool.description === "function"
      ? Reflect.apply(tool.description, tool, [{ context: undefined }])
      : tool.description;
  return typeof description === "string" ? description : undefined;
}

// An AI SDK tool's needsApproval: a boolean, or a function of (input, { toolCallId, messages }).
function approvalOf(tool: AiSdkTool<unknown, unknown>, approval: unknown): ToolOptions["needsApproval"] {
  if (typeof approval === "boolean") return approval;
  if (typeof approval !== "function") return undefined;
  return async (input, ctx) =>
    (await Reflect.apply(approval, tool, [input, { toolCallId: ctx.stepId, messages: [] }])) === true;
}

function described(
  description: string | undefined,
  schema: ResolvedToolSchema | undefined,
  needsApproval: ToolOptions["needsApproval"],
): Partial<Effect> {
  return {
    ...(description ? { description } : {}),
    ...(schema ? { inputSchema: schema.jsonSchema } : {}),
    ...(needsApproval === undefined || needsApproval === false ? {} : { needsApproval }),
  };
}

async function validated(schema: ResolvedToolSchema | undefined, input: unknown, ctx: EffectContext): Promise<unknown> {
  if (!schema) return input;
  const result = await schema.validate(input);
  if ("problems" in result) throw new ToolInputError(ctx.effectId, result.problems);
  return result.value;
}

// A streaming AI SDK tool yields preliminary results: its result is the last one.
async function lastOf(value: unknown): Promise<unknown> {
  const resolved = await value;
  if (!isAsyncIterable(resolved)) return resolved;
  let last: unknown;
  for await (const item of resolved) last = item;
  return last;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    Symbol.asyncIterator in value &&
    typeof value[Symbol.asyncIterator] === "function"
  );
}

/** A task effect: hand-written flow steps that are neither a model nor a tool. */
export function createTaskEffect<I, O>(fn: (input: I, ctx: EffectContext) => Promise<O> | O): Effect<I, O> {
  return { kind: "task", run: async (input, ctx) => fn(input, ctx) };
}
