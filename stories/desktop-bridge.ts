// Story: desktop-bridge. A desktop app split as Electron splits it: the main process owns the journal
// (fsStores in the app's data directory, its writer lock) and runs the agents; the window is another
// process (here a node:worker_threads thread, the "renderer") that shows the executions and sends the
// user's decisions, over a MessagePort handed to it at creation (Electron: MessageChannelMain and
// webContents.postMessage). loomwork/bridge carries snapshots, the execution list and sends.
// The window is closed mid-run and a new one opens: it reconnects and sees the current state; the user
// approves the tool call a human must decide; the main process journals it. The UI journals nothing.
//
//   npx tsx stories/desktop-bridge.ts [--dir <data dir>]   (else $LOOMWORK_DIR, else ./.tmp/desktop-bridge,
//   emptied first if the story made it; a directory it did not make is refused untouched)
import { fileURLToPath } from "node:url";
import { MessageChannel, Worker } from "node:worker_threads";
import { serveBridge } from "../adapters/bridge/index.js";
import { fsStores } from "../adapters/fs/index.js";
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  EVENT_RECEIVED,
  scriptedModel,
  type AgentLoopOutput,
  type JournaledActor,
} from "../index.js";
import { desktopAssistant, desktopEffects, FOLDERS } from "./support/desktopAssistant.js";
import { defaultStoryDir, exitOnRefusal, ownedStoryDir } from "./support/storyDir.js";
import { createReadModels } from "../readModels.js";

const args = process.argv.slice(2);
const given = (args.includes("--dir") ? args[args.indexOf("--dir") + 1] : undefined) ?? process.env.LOOMWORK_DIR;
const dir = await (
  given ? ownedStoryDir(given, "desktop-bridge") : defaultStoryDir(".tmp/desktop-bridge", "desktop-bridge")
).catch(exitOnRefusal);
const main = (text: string) => console.log(`[main] ${text}`);

// An agent that tidies the inbox: archiving a mail is a tool call a human approves in the window.
const tidy = agentLoop$({ id: "tidy", model: "tidyModel", tools: ["archive"], warnTranscriptBytes: false });
const archived: string[] = [];
const effects = {
  ...desktopEffects({ modelMs: 250, toolMs: 250 }),
  tidyModel: createLlmEffect(
    scriptedModel([
      { toolCalls: [{ id: "call_archive", toolName: "archive", input: { name: "billing.eml" } }] },
      { text: "Archived billing.eml." },
    ]),
  ),
  archive: createToolEffect(async ({ name }: { name: string }) => (archived.push(name), { archived: name }), {
    needsApproval: true,
  }),
};

// ---- boot: the main process opens the journal (taking its lock) and resumes what was running.
const stores = await fsStores({ dir });
const app = createApp(defineConfig({ stores, effects, logics: [desktopAssistant, tidy] }));
const { resumed } = await app.resumeUnfinished();
main(`journal ${dir} opened (writer lock held); ${resumed.length} unfinished executions resumed at boot`);

// ---- a window: a renderer on one end of a MessageChannel, the bridge on the other.
const bridges: { close(): void; expose(actor: JournaledActor): void }[] = [];
const actors: JournaledActor[] = [];
function openWindow(window: number, approve: boolean): Promise<Worker> {
  const { port1, port2 } = new MessageChannel();
  const bridge = serveBridge(createReadModels(app), port1, {
    allowSend: (_id, event) => event.type === "TOOL_APPROVAL",
  });
  bridges.push(bridge);
  for (const actor of actors) bridge.expose(actor);
  const worker = new Worker(fileURLToPath(new URL("./support/renderer.mjs", import.meta.url)), {
    workerData: { port: port2, window, approve },
    transferList: [port2],
  });
  return new Promise((ready, fail) => {
    port1.on("message", (m: { log?: string; ready?: boolean }) => {
      if (m.log) console.log(m.log);
      if (m.ready) ready(worker);
    });
    worker.once("error", fail);
  });
}

const first = await openWindow(1, false);
main("window 1 opened");
const digestActor = await app.start(desktopAssistant, {
  executionId: "digest-inbox",
  input: { prompt: "Digest my inbox folder." },
});
const tidyActor = await app.start(tidy, { executionId: "tidy-inbox", input: { prompt: "Archive the paid invoices." } });
actors.push(digestActor, tidyActor);
for (const bridge of bridges) for (const actor of actors) bridge.expose(actor);
main("started digest-inbox and tidy-inbox, exposed to the window");

// The window is closed while digest-inbox is reading files (a reload, or the user closes it).
const readingFiles = () => digestActor.getSnapshot().context.turn >= 1 || digestActor.getSnapshot().status !== "active";
await new Promise<void>((done) => {
  if (readingFiles()) return done();
  const sub = digestActor.subscribe(() => {
    if (!readingFiles()) return;
    sub.unsubscribe();
    done();
  });
});
await first.terminate();
bridges.shift()!.close();
main(
  `window 1 closed mid-run (digest-inbox at turn ${digestActor.getSnapshot().context.turn}, ${digestActor.getSnapshot().status}); the agents go on in the main process`,
);

const second = await openWindow(2, true);
main("window 2 opened: it reconnects and gets the current snapshots");
const [digest, tidied] = (await Promise.all([
  app.result("digest-inbox"),
  app.result("tidy-inbox"),
])) as AgentLoopOutput[];
await new Promise((settle) => setTimeout(settle, 100)); // the last snapshots reach the window
await second.terminate();
for (const bridge of bridges) bridge.close();

const log = await app.log("tidy-inbox");
const approval = log.find((r) => r.type === EVENT_RECEIVED && (r.event as { type?: string }).type === "TOOL_APPROVAL");
main(
  `digest-inbox done in ${digest!.turns} turns: ${digest!.text.split("\n").length} lines for ${FOLDERS.inbox!.length} mails`,
);
main(`tidy-inbox done: "${tidied!.text}"; archive ran ${archived.length} time(s), after the approval`);
main(
  `the approval is in the journal as seq ${approval?.seq} (${EVENT_RECEIVED}), written by the main process; the windows hold no store`,
);
await app.close();
await stores.close();
main("closed: the journal's lock released");
