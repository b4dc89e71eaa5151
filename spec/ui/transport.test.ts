// AgentChatTransport under the AI SDK's own chat client (@ai-sdk/react 4's `Chat`, what `useChat` runs): a
// user message starts the agent, its calls that need a human reach the client as approval parts, the
// client's addToolApprovalResponse answers (sent automatically once all are answered) decide them, and the
// same assistant message ends with the tools' outputs, the denial and the final text.
import { Chat } from "@ai-sdk/react";
import { lastAssistantMessageIsCompleteWithApprovalResponses } from "ai-v7";
import { afterEach, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { AgentChatTransport } from "../../actors/agents/uiChatTransport.js";
import { createApp, type App } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { memoryStores } from "../../stores/memory.js";

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

function chatApp() {
  const removed: string[] = [];
  const app = createApp(
    defineConfig({
      stores: memoryStores(),
      effects: {
        model: createLlmEffect(
          scriptedModel([
            {
              text: "Removing three files.",
              toolCalls: [
                { id: "c_tmp", toolName: "rm", input: { path: "/tmp/cache" } },
                { id: "c_notes", toolName: "rm", input: { path: "/home/me/notes" } },
                { id: "c_old", toolName: "rm", input: { path: "/home/me/old" } },
              ],
            },
            { text: "Removed /tmp/cache and /home/me/old; kept your notes." },
          ]),
        ),
        rm: createToolEffect(async ({ path }: { path: string }) => (removed.push(path), { removed: path }), {
          needsApproval: ({ path }) => !path.startsWith("/tmp/"),
        }),
      },
    }),
  );
  apps.push(app);
  return { app, removed, agent: agentLoop$({ id: "cleaner", model: "model", tools: ["rm"] }) };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
}

describe("AgentChatTransport with the AI SDK's Chat", () => {
  it("starts the agent, shows its approvals, takes addToolApprovalResponse's answers and continues the message", async () => {
    const { app, agent, removed } = chatApp();
    const chat = new Chat({
      id: "chat",
      transport: new AgentChatTransport({ app, agent }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: "Clean up my disk." });
    expect(chat.status).toBe("ready");
    const asked = chat.messages.at(-1)!;
    const approvals = asked.parts.flatMap((p) => ("approval" in p && p.approval ? [p.approval.id] : []));
    expect(approvals).toEqual(["c_notes", "c_old"]);
    expect(removed).toEqual(["/tmp/cache"]);

    await chat.addToolApprovalResponse({ id: "c_notes", approved: false, reason: "my notes" });
    await chat.addToolApprovalResponse({ id: "c_old", approved: true });
    await until(() => chat.status === "ready" && chat.messages.at(-1)!.parts.at(-1)?.type === "text");
    expect(removed).toEqual(["/tmp/cache", "/home/me/old"]);
    expect(chat.messages).toHaveLength(2);
    const message = chat.messages.at(-1)!;
    expect(message.id).toBe(asked.id);
    expect(message.parts.map((p) => [p.type, "state" in p ? p.state : undefined])).toEqual([
      ["step-start", undefined],
      ["text", "done"],
      ["tool-rm", "output-available"],
      ["tool-rm", "output-denied"],
      ["tool-rm", "output-available"],
      ["step-start", undefined],
      ["text", "done"],
    ]);
    expect(message.parts.at(-1)).toMatchObject({ text: "Removed /tmp/cache and /home/me/old; kept your notes." });
    expect(await app.result("chat-1")).toMatchObject({ text: "Removed /tmp/cache and /home/me/old; kept your notes." });
  });

  it("takes two rounds of approvals in one message: each response ends at its park, each answer continues it", async () => {
    const removed: string[] = [];
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          model: createLlmEffect(
            scriptedModel([
              { text: "First.", toolCalls: [{ id: "c_1", toolName: "rm", input: { path: "/a" } }] },
              { text: "Second.", toolCalls: [{ id: "c_2", toolName: "rm", input: { path: "/b" } }] },
              { text: "Both done." },
            ]),
          ),
          rm: createToolEffect(async ({ path }: { path: string }) => (removed.push(path), { removed: path }), {
            needsApproval: true,
          }),
        },
      }),
    );
    apps.push(app);
    const chat = new Chat({
      id: "two",
      transport: new AgentChatTransport({ app, agent: agentLoop$({ id: "twice", model: "model", tools: ["rm"] }) }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: "Remove /a, then /b." });
    await chat.addToolApprovalResponse({ id: "c_1", approved: true });
    await until(() => chat.status === "ready" && JSON.stringify(chat.messages).includes("approval-requested"));
    await chat.addToolApprovalResponse({ id: "c_2", approved: true });
    await until(() => chat.status === "ready" && chat.messages.at(-1)!.parts.at(-1)?.type === "text");
    expect(chat.error).toBeUndefined();
    expect(removed).toEqual(["/a", "/b"]);
    expect(chat.messages).toHaveLength(2);
    expect(chat.messages[1]!.parts.map((p) => ("state" in p && p.type !== "text" ? p.state : p.type))).toEqual([
      "step-start",
      "text",
      "output-available",
      "step-start",
      "text",
      "output-available",
      "step-start",
      "text",
    ]);
  });

  it("refuses regenerate, and bad options at construction", async () => {
    const { app, agent } = chatApp();
    const transport = new AgentChatTransport({ app, agent });
    await expect(
      transport.sendMessages({
        trigger: "regenerate-message",
        chatId: "c",
        messageId: undefined,
        messages: [],
        abortSignal: undefined,
      }),
    ).rejects.toThrow(/AgentChatTransport.regenerate/);
    expect(() => new AgentChatTransport({ app: {} as App, agent })).toThrow(/AgentChatTransport.app/);
    expect(await transport.reconnectToStream()).toBeNull();
  });
});
