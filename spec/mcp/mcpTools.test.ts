// mcpTools against a real MCP server (the SDK's server API): over stdio as a child process, and over
// Streamable HTTP on 127.0.0.1. An agent (agentLoop$ with scriptedModel) calls its tools.
import { readFileSync, existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createMCPClient } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import type { Effect } from "../../actors/effects/effect.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import type { ModelReply, ModelRequest } from "../../machines/helpers/messages.js";
import { isTainted } from "../../machines/helpers/taint.js";
import { memoryStores } from "../../stores/memory.js";
import { McpConnectionError, mcpTools, type McpServer, type McpTools } from "../../mcp.js";
import { removeTempDirs, tempDir } from "../reliability/support.js";
import { INJECTION, logRequests, owlsServer } from "./servers/owls.js";

const SERVER = fileURLToPath(new URL("./servers/owls.ts", import.meta.url));
const stdio = (env: Record<string, string> = {}): McpServer => ({
  name: "owls",
  command: process.execPath,
  args: ["--import", "tsx", SERVER],
  env,
});

const open: McpTools[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});
afterAll(removeTempDirs);

async function tools(server: McpServer, options?: Parameters<typeof mcpTools>[1]): Promise<McpTools> {
  const t = await mcpTools(server, options);
  open.push(t);
  return t;
}

/** Runs an agent whose turns are `replies` over `effects`; the requests the model received, and the output. */
async function runAgent(effects: Record<string, Effect>, names: string[], replies: ModelReply[]) {
  const requests: ModelRequest[] = [];
  const model = scriptedModel((request, call) => (requests.push(structuredClone(request)), replies[call]!));
  const app = createApp(
    defineConfig({ stores: memoryStores(), effects: { model: createLlmEffect(model), ...effects } }),
  );
  await app.start(agentLoop$({ id: "a", model: "model", tools: names }), {
    executionId: "r",
    input: { prompt: "owls?" },
  });
  const output = (await app.result("r")) as { text: string; sawTaintFrom: string[] };
  const log = await app.log("r");
  await app.close();
  return { requests, output, log };
}

const toolMessages = (request: ModelRequest) => request.messages.filter((m) => m.role === "tool");

describe("mcpTools over stdio", () => {
  it("lists the tools as effects <server>_<tool> with their descriptions and JSON Schemas", async () => {
    const owls = await tools(stdio());
    expect(owls.names).toEqual(["owls_search", "owls_broken", "owls_measure"]);
    expect(owls.effects.owls_search).toMatchObject({ kind: "tool", description: "Search the owl almanac" });
    expect(owls.effects.owls_search!.inputSchema).toMatchObject({ type: "object", required: ["q"] });
    expect(owls.list).toMatchObject({
      server: "owls",
      tools: [{ name: "search" }, { name: "broken" }, { name: "measure" }],
    });
    expect(JSON.parse(JSON.stringify(owls.list))).toEqual(owls.list);
  });

  it("taints every result mcp:<server> (fenced for the model, in sawTaintFrom), keeping structured content and resource links", async () => {
    const owls = await tools(stdio());
    const { requests, output, log } = await runAgent(owls.effects, owls.names, [
      { toolCalls: [{ toolName: "owls_search", input: { q: "barn owl" } }] },
      { text: "done" },
    ]);
    expect(output.sawTaintFrom).toEqual(["mcp:owls"]);
    const [result] = toolMessages(requests[1]!);
    expect(result!.content).toMatch(/^<untrusted-data origin="mcp:owls">/);
    expect(result!.content).toContain(INJECTION);
    const recorded = log.find((r) => r.type === "loom.step.completed" && String(r.stepId).includes(":tool:"));
    const journaled = (recorded as unknown as { output: unknown }).output;
    expect(isTainted(journaled)).toBe(true);
    expect(journaled).toMatchObject({
      __loomTainted: "mcp:owls",
      value: {
        content: [
          { type: "text", text: expect.stringContaining(INJECTION) },
          { type: "resource_link", uri: "almanac://owls/barn", name: "barn owl" },
        ],
        structuredContent: { hits: ["barn owl: hunts by sound"] },
      },
    });
  });

  it("turns isError into a tool error the model reads as an error (fenced), and the run goes on", async () => {
    const owls = await tools(stdio());
    const { requests, output } = await runAgent(owls.effects, owls.names, [
      { toolCalls: [{ toolName: "owls_broken", input: { why: "no owls" } }] },
      { text: "sorry" },
    ]);
    expect(output).toMatchObject({ text: "sorry", sawTaintFrom: ["mcp:owls"] });
    const [result] = toolMessages(requests[1]!);
    const error = (result!.content as { error: unknown }).error;
    expect(Object.keys(result!.content as object)).toEqual(["error"]);
    expect(error).toMatch(/^<untrusted-data origin="mcp:owls">/);
    expect(error).toContain("failed: no owls");
  });

  it("trusted: true turns taint off: results reach the model bare and sawTaintFrom stays empty", async () => {
    const owls = await tools(stdio(), { trusted: true });
    const { requests, output } = await runAgent(owls.effects, owls.names, [
      { toolCalls: [{ toolName: "owls_search", input: { q: "barn owl" } }] },
      { text: "done" },
    ]);
    expect(output.sawTaintFrom).toEqual([]);
    expect(toolMessages(requests[1]!)[0]!.content).toMatchObject({
      structuredContent: { hits: ["barn owl: hunts by sound"] },
    });
  });

  it("refuses an input its schema forbids before calling the server", async () => {
    const dir = await tempDir("mcp-input");
    const log = join(dir, "server.log");
    const owls = await tools(stdio({ OWLS_LOG: log }));
    const { requests } = await runAgent(owls.effects, owls.names, [
      { toolCalls: [{ toolName: "owls_search", input: { q: "" } }] },
      { text: "done" },
    ]);
    expect((toolMessages(requests[1]!)[0]!.content as { error: string }).error).toMatch(
      /^Invalid input for tool "owls_search": input\.q/,
    );
    expect(readFileSync(log, "utf8")).not.toContain("tools/call");
  });

  it("a server that dies mid-call fails that step as a tool error (not retried); the next call reconnects", async () => {
    const owls = await tools(stdio({ OWLS_DIE: "measure" }));
    const { requests, output } = await runAgent(owls.effects, owls.names, [
      { toolCalls: [{ toolName: "owls_measure", input: { bird: "barn owl" } }] },
      { toolCalls: [{ toolName: "owls_search", input: { q: "barn owl" } }] },
      { text: "done" },
    ]);
    const dead = (toolMessages(requests[1]!)[0]!.content as { error: string }).error;
    expect(dead).toMatch(/^MCP server "owls": the call to "measure" got no answer/);
    expect(toolMessages(requests[2]!)[1]!.content).toMatch(/^<untrusted-data origin="mcp:owls">/);
    expect(output.text).toBe("done");
  });

  it("closes with the app that registers its effects: app.close() ends the connection once", async () => {
    const owls = await mcpTools(stdio());
    const app = createApp(defineConfig({ stores: memoryStores(), effects: { ...owls.effects } }));
    expect(await owls.effects.owls_search!.run({ q: "barn" }, context("owls_search"))).toBeDefined();
    await app.close();
    await expect(owls.effects.owls_search!.run({ q: "x" }, context("owls_search"))).rejects.toBeInstanceOf(
      McpConnectionError,
    );
  });

  it("close() ends the connection; a later call refuses with McpConnectionError", async () => {
    const owls = await mcpTools(stdio());
    await owls.close();
    await expect(owls.effects.owls_search!.run({ q: "x" }, context("owls_search"))).rejects.toBeInstanceOf(
      McpConnectionError,
    );
  });
});

describe("a tool list that changed between boots (ADR 0014)", () => {
  it("pinned with options.tools: no tools/list, the same names whatever the server lists now, connect on first call", async () => {
    const dir = await tempDir("mcp-pin");
    const log = join(dir, "server.log");
    const first = await tools(stdio());
    const pinned = { ...first.list, tools: first.list.tools.filter((t) => t.name !== "broken") };
    pinned.tools.push({ name: "gone", description: "removed from the server", inputSchema: { type: "object" } });
    const second = await tools(stdio({ OWLS_LOG: log }), { tools: pinned });
    expect(existsSync(log)).toBe(false); // not contacted yet
    expect(second.names).toEqual(["owls_search", "owls_measure", "owls_gone"]);
    const { requests } = await runAgent(second.effects, second.names, [
      { toolCalls: [{ toolName: "owls_gone", input: {} }] },
      { text: "done" },
    ]);
    // The server's answer to a tool it no longer has is a tool error the model reads.
    expect(toolMessages(requests[1]!)[0]!.content).toMatchObject({ error: expect.stringContaining("gone") });
    expect(readFileSync(log, "utf8")).not.toContain("tools/list");
  });

  it("not pinned: each boot lists again, and the effects are the server's tools now", async () => {
    const now = await tools(stdio());
    expect(now.names).toContain("owls_measure");
  });
});

describe("mcpTools over Streamable HTTP on 127.0.0.1", () => {
  let http: Server | undefined;
  afterEach(async () => {
    await Promise.all(open.splice(0).map((t) => t.close()));
    http?.closeAllConnections();
    await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)));
    http = undefined;
  });

  it("lists, calls and taints as over stdio", async () => {
    const dir = await tempDir("mcp-http");
    const log = join(dir, "server.log");
    http = createServer((req, res) => {
      // Stateless: a server and a transport per request, as the SDK's example does.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const server = owlsServer({});
      res.on("close", () => void transport.close().then(() => server.close()));
      void server.connect(transport).then(() => {
        logRequests(transport, log);
        return transport.handleRequest(req, res);
      });
    });
    await new Promise<void>((resolve) => http!.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    const owls = await tools({ name: "owls", url: `http://127.0.0.1:${port}/mcp`, headers: { "x-test": "1" } });
    expect(owls.names).toEqual(["owls_search", "owls_broken", "owls_measure"]);
    const { output } = await runAgent(owls.effects, owls.names, [
      { toolCalls: [{ toolName: "owls_search", input: { q: "barn owl" } }] },
      { text: "done" },
    ]);
    expect(output.sawTaintFrom).toEqual(["mcp:owls"]);
    expect(readFileSync(log, "utf8")).toContain("tools/call search");
  });
});

describe("@ai-sdk/mcp tools passed to createToolEffect", () => {
  it("are tainted mcp:<client name>, and their isError results become tool errors", async () => {
    const client = await createMCPClient({
      name: "owls",
      transport: new Experimental_StdioMCPTransport({ command: process.execPath, args: ["--import", "tsx", SERVER] }),
    });
    try {
      const sdkTools = await client.tools();
      const effects = { search: createToolEffect(sdkTools.search!), broken: createToolEffect(sdkTools.broken!) };
      const { requests, output } = await runAgent(
        effects,
        ["search", "broken"],
        [
          {
            toolCalls: [
              { toolName: "search", input: { q: "barn owl" } },
              { toolName: "broken", input: { why: "x" } },
            ],
          },
          { text: "done" },
        ],
      );
      expect(output.sawTaintFrom).toEqual(["mcp:owls"]);
      const [search, broken] = toolMessages(requests[1]!);
      // @ai-sdk/mcp's own toModelOutput (content parts) is honoured, each text part fenced.
      const parts = search!.content as { type: string; text: string }[];
      expect(parts.length).toBeGreaterThan(0);
      for (const part of parts) {
        expect(part).toEqual({ type: "text", text: expect.stringMatching(/^<untrusted-data origin="mcp:owls">/) });
      }
      expect((broken!.content as { error: string }).error).toMatch(/^<untrusted-data origin="mcp:owls">/);
    } finally {
      await client.close();
    }
  });
});

function context(effectId: string) {
  return {
    executionId: "x",
    stepId: `x#${effectId}`,
    effectId,
    taskKind: "tool" as const,
    attempt: 1,
    idempotencyKey: "x",
    signal: new AbortController().signal,
  };
}
