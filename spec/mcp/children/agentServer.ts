// A process that serves an app's agent as an MCP tool over stdio (serveMcp), for spec/mcp/serveMcp.test.ts:
// the research agent with a scripted model and a search tool, its journal in memory.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { agentLoop$ } from "../../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../../actors/agents/model.js";
import { createApp } from "../../../actors/app.js";
import { defineConfig } from "../../../actors/config.js";
import { createToolEffect } from "../../../actors/effects/effect.js";
import { scriptedModel } from "../../../adapters/scripted/index.js";
import { serveMcp } from "../../../mcp.js";
import { memoryStores } from "../../../stores/memory.js";

export const researcher = agentLoop$({ id: "researcher", model: "model", tools: ["search"] });

/** An app whose agent searches once and answers with what it found for the prompt. */
export function researchApp() {
  const model = scriptedModel((request, call) => {
    const prompt = String(request.messages.find((m) => m.role === "user")?.content ?? "");
    return call === 0
      ? { toolCalls: [{ toolName: "search", input: { q: prompt } }] }
      : { text: `Found: ${String(request.messages.at(-1)?.content)}` };
  });
  return createApp(
    defineConfig({
      stores: memoryStores(),
      effects: {
        model: createLlmEffect(model),
        search: createToolEffect(async ({ q }: { q: string }) => `${q} hunt by sound`),
      },
      logics: [researcher],
    }),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const app = researchApp();
  const served = serveMcp(app, { agents: { researcher: { description: "Research one question" } } });
  await served.connect(new StdioServerTransport());
}
