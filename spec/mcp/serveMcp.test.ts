// serveMcp: an app's agent as an MCP tool, over the official SDK's server API, called with the SDK's own
// client over stdio (a child process) and Streamable HTTP (127.0.0.1): a call starts an execution and its
// result is the agent's answer.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { serveMcp } from "../../mcp.js";
import { EXECUTION_STARTED } from "../../stores/schema.js";
import { researchApp } from "./children/agentServer.js";

const CHILD = fileURLToPath(new URL("./children/agentServer.ts", import.meta.url));
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function client(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<Client> {
  const c = new Client({ name: "spec", version: "1.0.0" });
  await c.connect(transport);
  cleanups.push(() => c.close());
  return c;
}

describe("serveMcp(app, { agents })", () => {
  it("serves an agent as a tool over stdio: a call runs an execution, the result is its answer", async () => {
    const c = await client(
      new StdioClientTransport({ command: process.execPath, args: ["--import", "tsx", CHILD], stderr: "pipe" }),
    );
    const { tools } = await c.listTools();
    expect(tools).toEqual([
      expect.objectContaining({
        name: "researcher",
        description: "Research one question",
        inputSchema: expect.objectContaining({ type: "object", required: ["prompt"] }),
      }),
    ]);
    const result = await c.callTool({ name: "researcher", arguments: { prompt: "barn owls" } });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: "text", text: "Found: barn owls hunt by sound" }]);
    expect(result.structuredContent).toMatchObject({
      text: "Found: barn owls hunt by sound",
      executionId: expect.stringMatching(/^researcher-/),
      sawTaintFrom: [],
    });
  }, 60_000);

  it("serves over Streamable HTTP on 127.0.0.1; a bad input and an unknown agent are tool errors", async () => {
    const app = researchApp();
    cleanups.push(() => app.close());
    const served = serveMcp(app, { agents: ["researcher"], name: "owl-research" });
    const http: Server = createServer((req, res) => void served.handleHttp(req, res));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => (http.closeAllConnections(), http.close(resolve))));
    const { port } = http.address() as AddressInfo;
    const c = await client(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    expect(c.getServerVersion()?.name).toBe("owl-research");
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(["researcher"]);

    const result = await c.callTool({ name: "researcher", arguments: { prompt: "tawny owls" } });
    expect(result.content).toEqual([{ type: "text", text: "Found: tawny owls hunt by sound" }]);
    // The call was an execution of the app, journaled like any other.
    const executionId = (result.structuredContent as { executionId: string }).executionId;
    const log = await app.log(executionId);
    expect(log[0]).toMatchObject({ type: EXECUTION_STARTED, logicId: "researcher", input: { prompt: "tawny owls" } });

    const bad = await c.callTool({ name: "researcher", arguments: { question: "?" } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain("prompt");
    const unknown = await c.callTool({ name: "writer", arguments: { prompt: "x" } });
    expect(unknown.isError).toBe(true);
  }, 60_000);

  it("refuses an agent the app does not know", () => {
    const app = researchApp();
    cleanups.push(() => app.close());
    expect(() => serveMcp(app, { agents: ["writer"] })).toThrow(/writer/);
  });
});
