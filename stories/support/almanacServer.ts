// The MCP server of the mcp-agent story: the stories' offline web (search, fetchPage) as MCP tools,
// written with the official SDK's server API and run as its own process over stdio. Every request it
// receives is appended to the file ALMANAC_LOG names, one JSON line { pid, method, tool?, arguments? },
// so the story can count what each server process was asked.
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { z } from "zod";
import { PAGES, search } from "./researchAgent.js";

const server = new McpServer({ name: "almanac", version: "1.0.0" });
server.registerTool(
  "search",
  {
    description: "Web search: { query } -> the top three { title, url, snippet }.",
    inputSchema: { query: z.string() },
  },
  async ({ query }) => {
    const hits = search(query);
    return { content: [{ type: "text", text: JSON.stringify(hits) }], structuredContent: { hits } };
  },
);
server.registerTool(
  "fetchPage",
  { description: "Reads a page: { url } -> its title and text.", inputSchema: { url: z.string() } },
  async ({ url }) => {
    const page = PAGES.find((p) => p.url === url);
    if (!page) return { content: [{ type: "text", text: `404: ${url}` }], isError: true };
    return { content: [{ type: "text", text: `${page.title}\n\n${page.text}` }] };
  },
);

const transport: Transport = new StdioServerTransport();
await server.connect(transport);
const log = process.env.ALMANAC_LOG;
const deliver = transport.onmessage;
transport.onmessage = (message, extra) => {
  if (log && "method" in message) {
    const params = "params" in message ? (message.params as { name?: unknown; arguments?: unknown }) : undefined;
    const tool = message.method === "tools/call" ? { tool: params?.name, arguments: params?.arguments } : {};
    appendFileSync(log, `${JSON.stringify({ pid: process.pid, method: message.method, ...tool })}\n`);
  }
  deliver?.(message, extra);
};
// The agent process that spawned this one died (SIGKILL) or closed it: stdin ends, and so does this process.
process.stdin.on("close", () => process.exit(0));
