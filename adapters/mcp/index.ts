// loomwork/mcp: an MCP server's tools as tool effects, over the official @modelcontextprotocol/sdk client
// (an optional peer dependency). Each call is a journaled tool step, served from the log on replay; every
// result is tainted `mcp:<server>` unless the server is trusted. docs/agents.md "MCP tools", ADR 0014.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { ConfigError } from "../../actors/errors.js";
import type { Effect } from "../../actors/effects/effect.js";
import { mcpErrorOutput, mcpToolOutput } from "../../actors/effects/mcpResult.js";
import { jsonSchemaValidator, ToolInputError, type JsonSchema } from "../../actors/effects/toolSchema.js";
import { isObject } from "../../stores/shapes.js";
import { McpConnection, messageOf, type McpServer } from "./connection.js";
import { McpConnectionError } from "./errors.js";

export { McpConnectionError } from "./errors.js";
export type { McpServer, McpStdioServer, McpHttpServer } from "./connection.js";
export type { McpToolOutput } from "../../actors/effects/mcpResult.js";

/** One tool as the server listed it: what the model is told, and what its input is checked against. */
export interface McpToolDefinition {
  /** The tool's name on the server. */
  name: string;
  /** The server's description of the tool, sent to the model. */
  description?: string;
  /** The tool's input, as JSON Schema; each call's input is checked against it before the server is called. */
  inputSchema: JsonSchema;
}

/**
 * A server's tool list, as `mcpTools()` read it (`tools/list`) and returns it in `list`: plain JSON, to keep
 * (a file, your config) and give back as `options.tools`, so a later boot (a resume) never lists again.
 */
export interface McpToolList {
  /** The server's name the list was read from. */
  server: string;
  /** Its tools, in the server's order. */
  tools: McpToolDefinition[];
}

/** Options of `mcpTools`. */
export interface McpToolsOptions {
  /**
   * `true` turns taint off for this server: its results reach the model bare, and `sawTaintFrom` never
   * names it. Only for a server you run and whose data you control; by default every result (and every
   * error the server reports) is tainted with origin `mcp:<name>`.
   */
  trusted?: boolean;
  /**
   * The tool list to use instead of listing the server's: the `list` an earlier `mcpTools()` returned. With
   * it, `mcpTools()` does not contact the server at all (it connects on the first call), and the effects and
   * `names` are the same at every boot whatever the server lists now (ADR 0014).
   */
  tools?: McpToolList;
  /** How long one call waits for the server's answer, in ms (default 60,000: the SDK's). */
  callTimeoutMs?: number;
}

/** What `mcpTools` returns: the effects to register, their names for an agent, the list, and `close()`. */
export interface McpTools {
  /** One tool effect per server tool, named `<server>_<tool>`: spread into `defineConfig({ effects })`. */
  effects: Record<string, Effect>;
  /** The effects' names, in the server's order: `agentLoop$({ tools: names })`. */
  names: string[];
  /** The tool list in use (plain JSON): keep it and pass it back as `options.tools` to pin it. */
  list: McpToolList;
  /** Closes the connection (a stdio server's process ends). The app that registers the effects calls it when it closes (`Effect.close`); call it yourself when no app does. */
  close(): Promise<void>;
}

const SERVER_NAME = /^[A-Za-z0-9_-]+$/;

/**
 * An MCP server's tools as tool effects. Lists the server's tools once (`tools/list`) unless `options.tools`
 * gives the list; each tool becomes the effect `<server>_<tool>`, whose calls are journaled tool steps and
 * whose results are tainted `mcp:<server>` (`trusted: true` turns that off).
 *
 * @example
 * const owls = await mcpTools({ name: "owls", command: "node", args: ["owls-server.js"] });
 * const app = createApp(defineConfig({ stores, effects: { model, ...owls.effects } }));
 * const agent = agentLoop$({ id: "researcher", model: "model", tools: owls.names });
 */
export async function mcpTools(server: McpServer, options: McpToolsOptions = {}): Promise<McpTools> {
  if (!isObject(server) || typeof server.name !== "string" || !SERVER_NAME.test(server.name))
    throw new ConfigError("mcpTools.name", "the server's name: letters, digits, `_` and `-` (it prefixes tool names).");
  if (!("url" in server) && typeof server.command !== "string")
    throw new ConfigError("mcpTools", "a server to run ({ name, command, args? }) or to reach ({ name, url }).");
  const connection = new McpConnection(server);
  let list: McpToolList;
  try {
    list = options.tools ?? (await listTools(connection, server.name));
  } catch (error) {
    await connection.close();
    throw error;
  }
  const origin = options.trusted === true ? undefined : `mcp:${server.name}`;
  // One close for every effect of the server: the app closing calls it once (Effect.close).
  const close = () => connection.close();
  const effects: Record<string, Effect> = {};
  for (const tool of list.tools) {
    const name = effectNameOf(server.name, tool.name);
    if (name in effects)
      throw new ConfigError("mcpTools", `two tools of "${server.name}" are both named "${name}" once sanitized.`);
    effects[name] = { ...toolEffect(connection, server.name, tool, origin, options.callTimeoutMs), close };
  }
  return { effects, names: Object.keys(effects), list, close };
}

/** The effect name of a server's tool: `<server>_<tool>`, any character a provider refuses in a tool name as `_`. */
export function effectNameOf(server: string, tool: string): string {
  return `${server}_${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

async function listTools(connection: McpConnection, server: string): Promise<McpToolList> {
  const client = await connection.client();
  const tools: McpToolDefinition[] = [];
  let cursor: string | undefined;
  try {
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor });
      for (const tool of page.tools)
        tools.push({
          name: tool.name,
          ...(tool.description ? { description: tool.description } : {}),
          inputSchema: tool.inputSchema,
        });
      cursor = page.nextCursor;
    } while (cursor);
  } catch (cause) {
    throw new McpConnectionError(server, `could not list its tools (${messageOf(cause)}).`, { cause });
  }
  return { server, tools };
}

function toolEffect(
  connection: McpConnection,
  server: string,
  tool: McpToolDefinition,
  origin: string | undefined,
  timeout: number | undefined,
): Effect {
  const check = jsonSchemaValidator(tool.inputSchema);
  return {
    kind: "tool",
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    async run(input: unknown, ctx) {
      const problems = check(input);
      if (problems.length) throw new ToolInputError(ctx.effectId, problems);
      const client = await connection.client();
      try {
        const result = await client.callTool({ name: tool.name, arguments: isObject(input) ? input : {} }, undefined, {
          signal: ctx.signal,
          ...(timeout === undefined ? {} : { timeout }),
        });
        return mcpToolOutput(result, origin);
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        // An error the server answered with (unknown tool, invalid params) is its answer: a tool error.
        if (
          error instanceof McpError &&
          error.code !== ErrorCode.ConnectionClosed &&
          error.code !== ErrorCode.RequestTimeout
        )
          return mcpErrorOutput(error.message, origin);
        throw new McpConnectionError(
          server,
          `the call to "${tool.name}" got no answer (${messageOf(error)}); it may or may not have run on the server.`,
          { cause: error },
        );
      }
    },
  };
}
