// loomwork/mcp: MCP servers' tools as journaled, tainted tool effects, and an app's agents served as MCP
// tools (serveMcp), over the official @modelcontextprotocol/sdk (an optional peer dependency: install it
// to use this entry). An app that never imports it does not bundle it (docs/adr/0011-entry-points-by-role.md,
// docs/adr/0014-mcp-tools.md).

export { mcpTools, effectNameOf, McpConnectionError } from "./adapters/mcp/index.js";
export { serveMcp } from "./adapters/mcp/serve.js";
export type { McpAgentServer, ServeMcpOptions, ServedAgent } from "./adapters/mcp/serve.js";
export type {
  McpServer,
  McpStdioServer,
  McpHttpServer,
  McpToolDefinition,
  McpToolList,
  McpToolsOptions,
  McpTools,
  McpToolOutput,
} from "./adapters/mcp/index.js";
