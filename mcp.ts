// loomwork/mcp: MCP servers' tools as journaled, tainted tool effects, over the official
// @modelcontextprotocol/sdk client (an optional peer dependency: install it to use this entry). An app
// that never imports it does not bundle it (docs/adr/0011-entry-points-by-role.md, docs/adr/0014-mcp-tools.md).

export { mcpTools, effectNameOf, McpConnectionError } from "./adapters/mcp/index.js";
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
