// The docs/react.md chat in a real tab: useChat (@ai-sdk/react 4) over AgentChatTransport, an agent on
// IndexedDB, a tool that needs a human (approved and denied through the AI SDK's approval parts) and a
// tainted search whose origin the page shows. The same component as the docs' (written there in JSX);
// what the tools ran is kept on `window.ran` for the test.
import { useChat } from "@ai-sdk/react";
import {
  getToolName,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  uiMessageChunkSchema,
} from "ai-v7";
import { createElement as h, Fragment, StrictMode, useState } from "react";
import { createRoot } from "react-dom/client";
import { indexedDbStores } from "../../../adapters/indexeddb/index.js";
import {
  AgentChatTransport,
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  scriptedModel,
  tainted,
  type UIMessageChunk,
} from "../../../index.js";

const ran: string[] = [];
// Every chunk useChat reads, checked against ai 7's own chunk schema in the page: the types, and those refused.
const chunks = { types: [] as string[], refused: [] as string[] };
Object.assign(window, { ran, chunks });

const agent = agentLoop$({ id: "cleaner", model: "model", tools: ["search", "rm"] });
const app = createApp(
  defineConfig({
    stores: await indexedDbStores({ name: `chat-${Date.now()}` }),
    effects: {
      model: createLlmEffect(
        scriptedModel([
          {
            text: "I looked up what is safe to remove, and will remove three files.",
            toolCalls: [
              { id: "c_search", toolName: "search", input: { q: "safe to delete" } },
              { id: "c_tmp", toolName: "rm", input: { path: "/tmp/cache" } },
              { id: "c_notes", toolName: "rm", input: { path: "/home/me/notes" } },
              { id: "c_old", toolName: "rm", input: { path: "/home/me/old" } },
            ],
          },
          { text: "Removed /tmp/cache and /home/me/old; kept your notes, as you asked." },
        ]),
      ),
      search: createToolEffect(
        async ({ q }: { q: string }) => (ran.push(`search ${q}`), tainted(["caches", "old drafts"], "mcp:files")),
      ),
      rm: createToolEffect(async ({ path }: { path: string }) => (ran.push(`rm ${path}`), { removed: path }), {
        needsApproval: ({ path }) => !path.startsWith("/tmp/"),
      }),
    },
  }),
);
// The docs' transport, with each chunk it hands useChat checked on its way.
class CheckedTransport extends AgentChatTransport {
  override async sendMessages(request: Parameters<AgentChatTransport["sendMessages"]>[0]) {
    const schema = uiMessageChunkSchema();
    return (await super.sendMessages(request)).pipeThrough(
      new TransformStream<UIMessageChunk, UIMessageChunk>({
        async transform(chunk, out) {
          chunks.types.push(chunk.type);
          const checked = await schema.validate!(chunk);
          if (!checked.success) chunks.refused.push(`${JSON.stringify(chunk)}: ${String(checked.error)}`);
          out.enqueue(chunk);
        },
      }),
    );
  }
}
const transport = new CheckedTransport({ app, agent });

function Chat() {
  const { messages, sendMessage, addToolApprovalResponse, status } = useChat({
    transport,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [text, setText] = useState("Clean up my disk.");
  const answer = (id: string, approved: boolean) =>
    void addToolApprovalResponse({ id, approved, ...(approved ? {} : { reason: "keep my notes" }) });
  return h(
    "main",
    { id: "chat", "data-status": status },
    messages.map((message) =>
      h(
        "section",
        { key: message.id, className: message.role },
        message.parts.map((part, i) => {
          if (part.type === "text") return h("p", { key: i }, part.text);
          if (!isToolUIPart(part)) return null;
          const origin =
            part.state === "output-available" ? part.resultProviderMetadata?.loomwork?.taintedFrom : undefined;
          return h(
            "div",
            { key: i, className: `tool ${part.state}`, id: part.toolCallId },
            h("code", null, `${getToolName(part)} ${JSON.stringify(part.input)}`),
            h("span", { className: "state" }, part.state),
            Array.isArray(origin) ? h("span", { className: "taint" }, `untrusted: from ${origin.join(", ")}`) : null,
            part.state === "approval-requested"
              ? h(
                  Fragment,
                  null,
                  h("button", { className: "approve", onClick: () => answer(part.approval.id, true) }, "Approve"),
                  h("button", { className: "deny", onClick: () => answer(part.approval.id, false) }, "Deny"),
                )
              : null,
          );
        }),
      ),
    ),
    h(
      "form",
      {
        onSubmit: (event: { preventDefault(): void }) => {
          event.preventDefault();
          void sendMessage({ text });
          setText("");
        },
      },
      h("input", { value: text, onChange: (event: { target: { value: string } }) => setText(event.target.value) }),
      h("button", { id: "send", disabled: status !== "ready" }, "Send"),
    ),
  );
}

createRoot(document.getElementById("root")!).render(h(StrictMode, null, h(Chat)));
