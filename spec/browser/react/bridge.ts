// The UI side of the bridge in a page: the owner runs in a Worker (owner.ts); the page holds no store.
// It renders the remote actor and the owner's execution list with loomwork/react, and the Approve button
// sends TOOL_APPROVAL through the bridge; a refused event is shown as the owner's refusal.
import { createElement as h, useState } from "react";
import { createRoot } from "react-dom/client";
import { BridgeSendError, connectBridge, type BridgeClient, type RemoteActor } from "../../../adapters/bridge/index.js";
import { useExecution } from "../../../adapters/react/index.js";

const worker = new Worker(new URL("./owner.ts", import.meta.url), { type: "module" });
// The owner says when its bridge listens (its stores open first): a message sent before would be lost.
await new Promise<void>((ready) =>
  worker.addEventListener("message", function once(event: MessageEvent<{ ready?: boolean }>) {
    if (!event.data?.ready) return;
    worker.removeEventListener("message", once);
    ready();
  }),
);
const client: BridgeClient = connectBridge(worker);
const remote: RemoteActor = client.actor("digest-1");

function Chat() {
  const snapshot = useExecution(remote);
  const [note, setNote] = useState("");
  const views = useExecution(client.executions);
  const pending = views.find((v) => v.executionId === "digest-1")?.pendingApprovals ?? [];
  const output = snapshot?.output as { text?: string } | undefined;
  const send = (event: { type: string; [k: string]: unknown }) =>
    remote.sendAsync(event).then(
      () => setNote(`${event.type} journaled by the owner`),
      (error: unknown) => setNote(error instanceof BridgeSendError ? `refused: ${error.code}` : String(error)),
    );
  return h(
    "main",
    null,
    h("p", { id: "status" }, snapshot ? `${snapshot.status} · ${String(snapshot.value)}` : "connecting"),
    h(
      "ul",
      { id: "pending" },
      pending.map((p) =>
        h(
          "li",
          { key: p.toolCallId },
          `${p.toolName} ${JSON.stringify(p.input)}`,
          h(
            "button",
            {
              id: "approve",
              onClick: () => void send({ type: "TOOL_APPROVAL", toolCallId: p.toolCallId, approved: true }),
            },
            "Approve",
          ),
        ),
      ),
    ),
    h("button", { id: "other", onClick: () => void send({ type: "USER_MESSAGE", text: "hi" }) }, "Send a message"),
    h("p", { id: "note" }, note),
    output?.text ? h("p", { id: "output" }, output.text) : null,
    h("p", { id: "executions" }, views.map((v) => `${v.executionId}: ${v.status}`).join(", ")),
  );
}

createRoot(document.getElementById("root")!).render(h(Chat));
