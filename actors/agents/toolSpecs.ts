// What a model request's tools are declared with: the registered tool effects' descriptions and JSON
// Schemas, looked up at run time (the machine names tools; the model input is never journaled).
import type { ModelReply, ToolSpec } from "../../machines/helpers/messages.js";
import type { EffectContext } from "../effects/effect.js";

function registered(ctx: EffectContext, name: string): object | undefined {
  const effect: unknown = ctx.effectOf?.(name);
  return typeof effect === "object" && effect !== null ? effect : undefined;
}

/**
 * The reply's tool calls, each whose tool declares `needsApproval` (true, or a function that holds for
 * its input) marked `needsApproval` and given an id unique in the reply, so a TOOL_APPROVAL can name it.
 * Decided here, in the model step, so the decision is journaled with the reply.
 */
export async function markApprovals(reply: ModelReply, ctx: EffectContext): Promise<ModelReply> {
  const calls = reply.toolCalls;
  if (!Array.isArray(calls) || calls.length === 0) return reply;
  let marked = false;
  const ids = calls.map((c) => c.id);
  const out = await Promise.all(
    calls.map(async (call, j) => {
      const effect = registered(ctx, call.toolName);
      const rule: unknown = effect && "needsApproval" in effect ? effect.needsApproval : undefined;
      const needs = rule === true || (typeof rule === "function" && (await rule(call.input, ctx)) === true);
      if (!needs) return call;
      marked = true;
      const unique = call.id !== undefined && call.id !== "" && ids.indexOf(call.id) === j;
      return { ...call, id: unique ? call.id : `${ctx.stepId}:call:${j}`, needsApproval: true };
    }),
  );
  return marked ? { ...reply, toolCalls: out } : reply;
}

/** The description and JSON Schema the effect registered as `name` declares, as the runtime serving `ctx` knows it. */
function declarationOf(
  ctx: EffectContext,
  name: string,
): { description?: string; inputSchema?: Record<string, unknown> } {
  const effect = registered(ctx, name);
  if (!effect) return {};
  const description =
    "description" in effect && typeof effect.description === "string" ? effect.description : undefined;
  const schema = "inputSchema" in effect ? effect.inputSchema : undefined;
  const inputSchema =
    typeof schema === "object" && schema !== null && !Array.isArray(schema) ? { ...schema } : undefined;
  return { ...(description ? { description } : {}), ...(inputSchema ? { inputSchema } : {}) };
}

/** The request's tools with each registered tool's description (unless the agent gave one) and JSON Schema. */
export function withToolSpecs(tools: ToolSpec[], ctx: EffectContext): ToolSpec[] {
  return tools.map((tool) => {
    const declared = declarationOf(ctx, tool.name);
    const description = tool.description ?? declared.description;
    const inputSchema = tool.inputSchema ?? declared.inputSchema;
    return { ...tool, ...(description ? { description } : {}), ...(inputSchema ? { inputSchema } : {}) };
  });
}
