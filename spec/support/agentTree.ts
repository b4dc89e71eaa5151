// A tree of agents for the crash tests on real providers (issue 34): an orchestrator delegating two questions to
// researchers (agentTool, each a child execution) and handing off to a writer, and the loopback server's script that
// answers each agent, told apart by the tools its request offers. Deterministic: the answer depends on the requests.
import { z } from "zod";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { agentTool } from "../../actors/agents/agentTool.js";
import { handoff } from "../../actors/agents/handoff.js";
import type { ServerRequest, ServerTurn } from "./openaiServer.js";

export const researcher = agentLoop$({ id: "researcher", model: "model", tools: ["search"] });
export const writer = agentLoop$({ id: "writer", model: "model", system: "Write the answer." });
export const orchestrator = agentLoop$({
  id: "orchestrator",
  model: "model",
  tools: [
    agentTool(researcher, { description: "Research a question", inputSchema: z.object({ question: z.string() }) }),
  ],
  handoffs: [handoff(writer, { description: "When every question has a finding" })],
});

/** The search tool's input schema. */
export const searchInput = z.object({ q: z.string() });

/** What the search tool finds for a question. */
export const finding = (q: string) => `${q}: hunt by ear`;

/** The writer's answer, as an uninterrupted run gives it. */
export const TREE_ANSWER = "Answer: owls: hunt by ear; bats: hunt by ear.";

const text = (content: unknown) => (typeof content === "string" ? content : JSON.stringify(content));

/** The question a researcher's request is about (its user message). */
export const questionOf = (request: ServerRequest) =>
  text(request.body.messages.find((m) => m.role === "user")?.content);

/** Which agent a request is from: by the tools it offers. */
export function agentOf(request: ServerRequest): "orchestrator" | "researcher" | "writer" {
  const tools = (request.body.tools ?? []).map((t) => t.function.name);
  return tools.includes("researcher") ? "orchestrator" : tools.includes("search") ? "researcher" : "writer";
}

/** The loopback server's answer to each agent's request. */
export function treeReply(request: ServerRequest): ServerTurn {
  const messages = request.body.messages;
  const results = messages.filter((m) => m.role === "tool");
  const agent = agentOf(request);
  if (agent === "orchestrator")
    return results.length === 0
      ? {
          toolCalls: [
            { id: "r_owls", name: "researcher", arguments: '{"question":"owls"}' },
            { id: "r_bats", name: "researcher", arguments: '{"question":"bats"}' },
          ],
        }
      : { toolCalls: [{ id: "h_writer", name: "transfer_to_writer", arguments: "{}" }] };
  if (agent === "researcher") {
    const question = questionOf(request);
    return results.length === 0
      ? { toolCalls: [{ id: `s_${question}`, name: "search", arguments: JSON.stringify({ q: question }) }] }
      : { text: finding(question), chunkChars: 4 };
  }
  // The writer: the researchers' findings from the transcript it was handed.
  const found = ["owls", "bats"].filter((q) => results.some((m) => text(m.content).includes(finding(q))));
  return { text: `Answer: ${found.map(finding).join("; ")}.`, chunkChars: 4 };
}
