// An MCP `tools/call` result as a tool step's output: the content parts (resource links included) and the
// structured content kept, tainted with the server's origin unless the caller trusts it, and an `isError`
// result turned into the `{ error }` shape the loop sends as an error. Shared by loomwork/mcp and
// createToolEffect's reading of @ai-sdk/mcp tools; no dependency on either SDK.
import { isObject } from "../../stores/shapes.js";
import { tainted } from "../../machines/helpers/taint.js";

/** What a tool step journals for an MCP result: `{ content, structuredContent? }`, tainted unless trusted. */
export interface McpToolOutput {
  /** The result's content parts as the server sent them: text, image, audio, resource links, embedded resources. */
  content: unknown[];
  /** The result's structured content, when the server sent one. */
  structuredContent?: Record<string, unknown>;
}

/** Whether a value has the shape of an MCP CallToolResult (`content` parts, maybe `isError`, `structuredContent`). */
export function isMcpCallToolResult(value: unknown): value is Record<string, unknown> & { content: unknown[] } {
  return isObject(value) && Array.isArray(value.content);
}

/**
 * The output a tool step journals for an MCP result. `origin` is the taint origin (`mcp:<server>`), or
 * undefined for a trusted server. An `isError: true` result becomes `{ error: ... }`: the model reads it as
 * the tool's error (the AI SDK's error-text once fenced, error-json when trusted), and the step completes,
 * so it is served from the log on replay and never retried.
 */
export function mcpToolOutput(result: Record<string, unknown>, origin: string | undefined): unknown {
  const content = Array.isArray(result.content) ? result.content : [];
  const body: McpToolOutput = {
    content,
    ...(isObject(result.structuredContent) ? { structuredContent: result.structuredContent } : {}),
  };
  // The protocol's older form: a bare `toolResult`.
  const value = !Array.isArray(result.content) && "toolResult" in result ? result.toolResult : body;
  const marked = origin === undefined ? value : tainted(value, origin);
  return result.isError === true ? { error: marked } : marked;
}

/** An error the server reported (not the transport) as a tool error result, tainted like its results. */
export function mcpErrorOutput(message: string, origin: string | undefined): { error: unknown } {
  return { error: origin === undefined ? message : tainted(message, origin) };
}
