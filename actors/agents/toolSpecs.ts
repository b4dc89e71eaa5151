// What a model request's tools are declared with: the registered tool effects' descriptions and JSON
// Schemas, looked up at run time (the machine names tools; the model input is never journaled).
import type { ToolSpec } from "../../machines/helpers/messages.js";
import type { EffectContext } from "../effects/effect.js";

/** Where the runtime puts the registered effects' lookup on an EffectContext (a symbol: never JSON, never journaled). */
export const LOOM_EFFECTS: unique symbol = Symbol.for("loomwork.effects");

/** The description and JSON Schema the effect registered as `name` declares, as the runtime serving `ctx` knows it. */
function declarationOf(ctx: EffectContext, name: string): { description?: string; inputSchema?: Record<string, unknown> } {
  const lookup: unknown = Reflect.get(ctx, LOOM_EFFECTS);
  const effect: unknown = typeof lookup === "function" ? lookup(name) : undefined;
  if (typeof effect !== "object" || effect === null) return {};
  const description = "description" in effect && typeof effect.description === "string" ? effect.description : undefined;
  const schema = "inputSchema" in effect ? effect.inputSchema : undefined;
  const inputSchema = typeof schema === "object" && schema !== null && !Array.isArray(schema) ? { ...schema } : undefined;
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
