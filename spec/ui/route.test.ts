// The docs' route (docs/agents.md, "The UI message stream"): POST /api/chat with createUIMessageStreamResponse,
// read by the AI SDK's own HTTP client (ai 7's DefaultChatTransport, which parses the SSE and checks every
// chunk against ai 7's schema) under @ai-sdk/react's Chat: the headers, the [DONE] terminator, the approval
// parts, the answers sent back through the route and the same message continued.
import { Chat } from "@ai-sdk/react";
import {
  createUIMessageStreamResponse,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from "ai-v7";
import { afterEach, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { convertToToolApprovalEvents } from "../../actors/agents/uiApprovals.js";
import { createApp, type App } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import type { Message } from "../../machines/helpers/messages.js";
import { memoryStores } from "../../stores/memory.js";

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe("the docs' useChat route, read by ai 7's DefaultChatTransport", () => {
  it("answers with the UI stream's headers and [DONE], parks, takes the answers and continues the message", async () => {
    const deleted: string[] = [];
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          model: createLlmEffect(
            scriptedModel([
              {
                text: "Deleting.",
                toolCalls: [{ id: "c_hosts", toolName: "deleteFile", input: { path: "/etc/hosts" } }],
              },
              { text: "Kept /etc/hosts." },
            ]),
          ),
          deleteFile: createToolEffect(async ({ path }: { path: string }) => (deleted.push(path), { deleted: path }), {
            needsApproval: true,
          }),
        },
      }),
    );
    apps.push(app);
    // The route of docs/agents.md, as written there.
    const agent = agentLoop$({ id: "assistant", model: "model", tools: ["deleteFile"] });
    const textOf = (m: UIMessage) => m.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
    async function POST(request: Request): Promise<Response> {
      const { id, messages }: { id: string; messages: UIMessage[] } = await request.json();
      const executionId = `${id}-${messages.filter((m) => m.role === "user").length}`;
      const approvals = convertToToolApprovalEvents(messages);
      if (approvals.length > 0) {
        const actor = await app.resume(executionId);
        for (const event of approvals) await actor.sendAsync(event);
      } else {
        const history: Message[] = messages.map((m) => ({ role: m.role, content: textOf(m) }));
        await app.start(agent, { executionId, input: { messages: history } });
      }
      return createUIMessageStreamResponse({
        stream: app.stream(executionId).toUIMessageStream({ originalMessages: messages }),
      });
    }

    const bodies: string[] = [];
    const headers: Headers[] = [];
    const chat = new Chat({
      id: "chat",
      transport: new DefaultChatTransport({
        api: "http://127.0.0.1/api/chat",
        fetch: async (input, init) => {
          const response = await POST(new Request(input, init));
          headers.push(response.headers);
          const body = await response.text();
          bodies.push(body);
          return new Response(body, { headers: response.headers });
        },
      }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: "Delete /etc/hosts." });
    expect(chat.error).toBeUndefined();
    expect(headers[0]!.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    expect(headers[0]!.get("cache-control")).toBe("no-cache");
    expect(bodies[0]!.endsWith("data: [DONE]\n\n")).toBe(true);
    const asked = chat.messages.at(-1)!;
    expect(asked.parts.find((p) => p.type === "tool-deleteFile")).toMatchObject({ state: "approval-requested" });

    await chat.addToolApprovalResponse({ id: "c_hosts", approved: false, reason: "needed" });
    for (let i = 0; i < 2000 && !(chat.status === "ready" && bodies.length === 2); i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(chat.error).toBeUndefined();
    expect(bodies).toHaveLength(2);
    const message = chat.messages.at(-1)!;
    expect(message.id).toBe(asked.id);
    expect(message.parts.find((p) => p.type === "tool-deleteFile")).toMatchObject({
      state: "output-denied",
      approval: { id: "c_hosts", approved: false, reason: "needed" },
    });
    expect(message.parts.at(-1)).toMatchObject({ type: "text", text: "Kept /etc/hosts." });
    expect(deleted).toEqual([]);
  });
});
