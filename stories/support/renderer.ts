// The UI process of stories/desktop-bridge.ts, as an Electron renderer would be: no store, no lock, no
// journal. It gets a MessagePort from the main process (Electron: ipcRenderer.on("loomwork", e => e.ports[0])),
// connects a bridge client on it, shows the execution list and the snapshots of the actors it watches, and
// approves the tool call a human must decide, through the bridge. Everything it does is journaled by the
// main process or not at all.
import { workerData, type MessagePort } from "node:worker_threads";
import { BridgeSendError, connectBridge } from "../../adapters/bridge/index.js";
import type { ExecutionView } from "../../readModels.js";

const { port, window, approve } = workerData as { port: MessagePort; window: number; approve: boolean };
const say = (text: string) => port.postMessage({ log: `[ui ${window}] ${text}` });
const client = connectBridge(port);

const shown = new Map<string, string>();
const describe = (v: ExecutionView) =>
  `${v.status}, ${v.steps.completed} steps${v.pendingApprovals.length ? `, waiting for approval: ${v.pendingApprovals.map((p) => `${p.toolName}(${JSON.stringify(p.input)})`).join(", ")}` : ""}`;
let decided = false;
client.executions.subscribe((views) => {
  for (const view of views) {
    const line = describe(view);
    if (shown.get(view.executionId) === line) continue;
    shown.set(view.executionId, line);
    say(`${view.executionId.padEnd(13)} ${line}`);
    const pending = view.pendingApprovals[0];
    if (approve && pending && !decided) {
      decided = true;
      void decide(view.executionId, pending.toolCallId);
    }
  }
});

const digest = client.actor("digest-inbox");
let lastValue: unknown;
digest.subscribe((snapshot) => {
  if (!snapshot || snapshot.value === lastValue) return;
  lastValue = snapshot.value;
  const output = snapshot.output as { text?: string } | undefined;
  say(`digest-inbox  is ${String(snapshot.value)}${output?.text ? `: ${output.text.split("\n")[0]}` : ""}`);
});

async function decide(executionId: string, toolCallId: string): Promise<void> {
  const tidy = client.actor(executionId);
  // The main process allows only TOOL_APPROVAL from the UI: anything else is refused there, not journaled.
  await tidy.sendAsync({ type: "USER_MESSAGE", text: "and delete everything" }).catch((error: unknown) => {
    say(
      `a USER_MESSAGE was refused by the main process: ${error instanceof BridgeSendError ? `${error.code} (${error.message})` : String(error)}`,
    );
  });
  say(`the user clicks Approve on ${toolCallId}`);
  await tidy.sendAsync({ type: "TOOL_APPROVAL", toolCallId, approved: true });
  say(`approval journaled by the main process`);
}

port.postMessage({ ready: true });
