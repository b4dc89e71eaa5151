// serveMcp: the other direction of loomwork/mcp. An app's agents as the tools of an MCP server, over the
// official SDK's server API: a call starts an execution of the agent (journaled like any other: it
// survives the caller, is resumable, shows in app.log), and the call's result is the execution's answer.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { AnyStateMachine } from "xstate";
import type { App } from "../../actors/app.js";
import { ConfigError } from "../../actors/errors.js";
import { isObject } from "../../stores/shapes.js";

/** One agent served as a tool. */
export interface ServedAgent {
  /** The agent's logic. @defaultValue the logic the app registered (`defineConfig({ logics })`) under the tool's name */
  logic?: AnyStateMachine;
  /** What the tool does, for the calling model. @defaultValue "Runs the <name> agent on a prompt and returns its answer." */
  description?: string;
}

/** Options of `serveMcp`. */
export interface ServeMcpOptions {
  /**
   * The agents to serve, each a tool named after it: logic ids the app registered (`["researcher"]`), or
   * tools by name (`{ research: { logic: researcher, description } }`). A tool takes `{ prompt: string }`.
   */
  agents: string[] | Record<string, ServedAgent>;
  /** The server's name, as the client's `initialize` reads it. @defaultValue "loomwork" */
  name?: string;
  /** The server's version. @defaultValue "1.0.0" */
  version?: string;
  /** The id of the execution a call starts. @defaultValue `<tool>-<random UUID>` */
  executionIdOf?: (tool: string, prompt: string) => string;
}

/** What `serveMcp` returns: a server per transport, and a Streamable HTTP handler. */
export interface McpAgentServer {
  /** The tools' names, in order. */
  readonly tools: string[];
  /** A new SDK server with the agents as tools (an SDK server serves one transport). */
  createServer(): Server;
  /** A new server connected to `transport`: `await served.connect(new StdioServerTransport())`. */
  connect(transport: Transport): Promise<Server>;
  /**
   * Serves one Streamable HTTP request (stateless: a server and a transport for the request), from a
   * `node:http` server or Express: `createServer((req, res) => served.handleHttp(req, res))`. `body` is
   * the parsed JSON body when a framework read it already.
   */
  handleHttp(req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void>;
}

const inputSchema = (): Tool["inputSchema"] => ({
  type: "object",
  properties: { prompt: { type: "string", minLength: 1, description: "The question or task for the agent." } },
  required: ["prompt"],
  additionalProperties: false,
});

/**
 * Serves an app's agents as MCP tools. A call starts an execution of the agent with `{ prompt }`, waits
 * for its end, and answers with its text (`content`) and `{ text, executionId, sawTaintFrom }`
 * (`structuredContent`); an execution that fails, or a call without a prompt, is a tool error
 * (`isError: true`). A client's cancellation stops the execution.
 *
 * @example
 * import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
 * const served = serveMcp(app, { agents: ["researcher"] });
 * await served.connect(new StdioServerTransport());
 */
export function serveMcp(app: App, options: ServeMcpOptions): McpAgentServer {
  const agents = agentsOf(app, options);
  const tools: Tool[] = [...agents].map(([name, agent]) => ({
    name,
    description: agent.description ?? `Runs the ${name} agent on a prompt and returns its answer.`,
    inputSchema: inputSchema(),
  }));
  const executionIdOf = options.executionIdOf ?? ((tool: string) => `${tool}-${crypto.randomUUID()}`);

  const call = async (name: string, args: unknown, signal: AbortSignal): Promise<CallToolResult> => {
    const agent = agents.get(name);
    if (!agent) return failure(`No agent "${name}" here; the tools are: ${[...agents.keys()].join(", ")}.`);
    const prompt = isObject(args) ? args.prompt : undefined;
    if (typeof prompt !== "string" || prompt === "")
      return failure(`"${name}" takes { prompt: string }, a non-empty prompt.`);
    const executionId = executionIdOf(name, prompt);
    const onAbort = () => void app.stop(executionId, "the MCP client cancelled the call").catch(() => undefined);
    try {
      const input = { prompt };
      await (agent.logic ? app.start(agent.logic, { executionId, input }) : app.start(name, { executionId, input }));
      signal.addEventListener("abort", onAbort, { once: true });
      const output = await app.result(executionId);
      const text = textOf(output);
      const sawTaintFrom = isObject(output) && Array.isArray(output.sawTaintFrom) ? output.sawTaintFrom : [];
      return { content: [{ type: "text", text }], structuredContent: { text, executionId, sawTaintFrom } };
    } catch (error) {
      return failure(`The ${name} agent (execution "${executionId}") failed: ${messageOf(error)}`);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  };

  const createServer = () => {
    const server = new Server(
      { name: options.name ?? "loomwork", version: options.version ?? "1.0.0" },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
      call(request.params.name, request.params.arguments, extra.signal),
    );
    return server;
  };

  return {
    tools: tools.map((t) => t.name),
    createServer,
    async connect(transport) {
      const server = createServer();
      await server.connect(transport);
      return server;
    },
    async handleHttp(req, res, body) {
      const server = createServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    },
  };
}

function agentsOf(app: App, options: ServeMcpOptions): Map<string, ServedAgent> {
  const given = options?.agents;
  if (!Array.isArray(given) && !isObject(given))
    throw new ConfigError(
      "serveMcp.agents",
      "the agents to serve: logic ids, or { [tool]: { logic?, description? } }.",
    );
  const entries: [string, ServedAgent][] = Array.isArray(given)
    ? given.map((id) => [String(id), {}])
    : Object.entries(given).map(([name, agent]) => [name, isObject(agent) ? agent : {}]);
  if (entries.length === 0) throw new ConfigError("serveMcp.agents", "at least one agent.");
  const registered = new Set((app.config.logics ?? []).map((logic) => logic.id));
  for (const [name, agent] of entries) {
    if (!/^[A-Za-z0-9_.-]{1,128}$/.test(name))
      throw new ConfigError("serveMcp.agents", `"${name}" is not a tool name (letters, digits, _ . -).`);
    if (agent.logic === undefined && !registered.has(name))
      throw new ConfigError(
        "serveMcp.agents",
        `"${name}" is not a logic the app registered (defineConfig({ logics })): register it, or give { ${name}: { logic } }.`,
      );
  }
  return new Map(entries);
}

function textOf(output: unknown): string {
  if (typeof output === "string") return output;
  if (isObject(output) && typeof output.text === "string") return output.text;
  return JSON.stringify(output) ?? "";
}

function failure(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
