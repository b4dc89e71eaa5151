// loomwork/react in a real tab on IndexedDB: the first load starts "digest-1"; a reload resumes it with
// app.resumeUnfinished() and renders the resumed actor with the hooks. What each load ran, and the
// replay report of the resume, are kept in localStorage and shown, so the test (and the screenshot)
// can tell what came from the journal.
import { createElement as h, StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { useExecution, useExecutionSelector, useExecutions } from "../../../adapters/react/index.js";
import { indexedDbStores } from "../../../adapters/indexeddb/index.js";
import { createApp, defineConfig, type JournaledActor } from "../../../index.js";
import { digest, digestEffects } from "./agent.js";
import { createReadModels, type ReadModels } from "../../../readModels.js";

const load = Number(localStorage.getItem("load") ?? 0) + 1;
localStorage.setItem("load", String(load));
const ranKey = `ran:${load}`;
const ran = (stepId: string) =>
  localStorage.setItem(ranKey, JSON.stringify([...JSON.parse(localStorage.getItem(ranKey) ?? "[]"), stepId]));

const stores = await indexedDbStores({ name: "react-reload" });
const app = createApp(defineConfig({ stores, effects: digestEffects(ran), logics: [digest] }));
const { resumed } = await app.resumeUnfinished();
let actor: JournaledActor<typeof digest> | JournaledActor;
if (resumed[0]) {
  actor = resumed[0];
  localStorage.setItem(`replay:${load}`, JSON.stringify(resumed[0].replay));
} else if (!(await stores.events.getExecution("digest-1"))) {
  actor = await app.start(digest, { executionId: "digest-1", input: { prompt: "How do barn owls hunt?" } });
} else {
  actor = await app.resume("digest-1", digest); // ended: shown as it ended
}

function Run({ actor }: { actor: JournaledActor }) {
  const snapshot = useExecution(actor);
  const turn = useExecutionSelector(actor, (s) => (s.context as { turn: number }).turn);
  const output = snapshot.output as { text?: string } | undefined;
  return h(
    "section",
    { id: "run", "data-status": snapshot.status },
    h("strong", null, actor.id, " "),
    h("span", { className: `status ${snapshot.status}` }, snapshot.status),
    h("p", { id: "state" }, `state ${String(snapshot.value)} · turn ${turn}`),
    output?.text ? h("p", { id: "output" }, output.text) : null,
  );
}

function Runs({ models }: { models: ReadModels }) {
  const executions = useExecutions(models);
  return h(
    "section",
    null,
    h("strong", null, "useExecutions(models)"),
    h(
      "ul",
      { id: "executions" },
      executions.map((e) =>
        h("li", { key: e.executionId }, `${e.executionId}: ${e.status}, ${e.steps.completed} steps completed`),
      ),
    ),
  );
}

function Loads({ actor }: { actor: JournaledActor }) {
  useExecution(actor); // re-rendered with each snapshot: the counts below are read from localStorage then
  const loads = Array.from({ length: load }, (_, i) => i + 1);
  return h(
    "section",
    { id: "loads" },
    h("strong", null, "page loads"),
    h(
      "ul",
      null,
      loads.map((n) => {
        const replay = JSON.parse(localStorage.getItem(`replay:${n}`) ?? "null") as {
          recordsReplayed: number;
          stepsServedFromLog: number;
        } | null;
        const calls = (JSON.parse(localStorage.getItem(`ran:${n}`) ?? "[]") as string[]).length;
        return h(
          "li",
          { key: n },
          `load ${n}: ${replay ? `resumed from IndexedDB, ${replay.recordsReplayed} records replayed, ${replay.stepsServedFromLog} steps served from the journal; ` : ""}${calls} model/tool calls run`,
        );
      }),
    ),
  );
}

createRoot(document.getElementById("root")!).render(
  h(
    StrictMode,
    null,
    h("h1", null, "loomwork/react · an agent in a tab, reloaded mid-run"),
    h(Run, { actor: actor as JournaledActor }),
    h(Runs, { models: createReadModels(app) }),
    h(Loads, { actor: actor as JournaledActor }),
  ),
);
(window as unknown as { loomLoad: number }).loomLoad = load;
