// Story: an agent that runs entirely in this tab, journaled to IndexedDB, with no network. Reload the
// page mid-run: on load the unfinished execution is resumed from the journal (under its Web Lock, so a
// second tab watches instead of racing), and no recorded model or tool call runs again. The list of
// executions is a live Dexie query of the catalogue; the timeline is the execution's journal.
import {
  createApp,
  defineConfig,
  STEP_COMPLETED,
  TOOL_APPROVAL_EVENT,
  WriterLockedError,
  type EffectContext,
  type ExecutionInfo,
  type JournaledActor,
  type JournalRecord,
} from "../../index.js";
import { indexedDbStores, watchExecutions, type IndexedDbStores } from "../../adapters/indexeddb/index.js";
import { DEFAULT_PROMPT, LOOP_ID, researchEffects, researchLoop } from "./agent.js";
import { el, renderDetail, renderExecutions, type LocalFacts } from "./view.js";
import { createReadModels } from "../../readModels.js";

const DATABASE = "loomwork-browser-offline";
// ?pace=<ms> per tool call (a model call takes half): slow enough by default to reload mid-run.
const pace = Number(new URLSearchParams(location.search).get("pace") ?? 800);

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const ui = {
  form: $<HTMLFormElement>("run"),
  prompt: $<HTMLInputElement>("prompt"),
  list: $<HTMLUListElement>("executions"),
  detail: $<HTMLElement>("detail"),
  network: $<HTMLElement>("network"),
  calls: $<HTMLElement>("calls"),
  clear: $<HTMLButtonElement>("clear"),
};

const facts = new Map<string, LocalFacts>();
const factsOf = (id: string): LocalFacts => {
  let local = facts.get(id);
  if (!local) facts.set(id, (local = { ranHere: new Set(), elsewhere: false }));
  return local;
};
const calls = { model: 0, tool: 0 };
let executions: ExecutionInfo[] = [];
let selected: string | undefined;
let drawn = 0;
// The actors this tab runs (start or resume), to send an approval to.
const actors = new Map<string, JournaledActor>();

function countCall(ctx: EffectContext): void {
  factsOf(ctx.executionId).ranHere.add(ctx.stepId);
  calls[ctx.effectId === "model" ? "model" : "tool"]++;
  ui.calls.textContent = `This page load: ${calls.model} model calls, ${calls.tool} tool calls`;
}

const stores: IndexedDbStores = await indexedDbStores({ name: DATABASE });
const app = createApp(
  defineConfig({
    stores,
    effects: researchEffects(pace, countCall),
    logics: [researchLoop],
    execution: { snapshotEvery: 16 },
  }),
);
const models = createReadModels(app);

/**
 * Runs `work` (a start or a resume) as the execution's single writer: the app takes the stores' Web Lock
 * itself and holds it until the run ends. Resolves false when another tab holds it.
 */
async function asWriter(executionId: string, work: () => Promise<unknown>): Promise<boolean> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof WriterLockedError)) throw error;
    factsOf(executionId).elsewhere = true;
    return false;
  }
  app.result(executionId).then(draw, draw);
  return true;
}

/** On load: resume every unfinished run of this page's agent from the journal. */
async function resumeUnfinished(): Promise<void> {
  const unfinished = (await stores.events.listExecutions()).filter(
    (info) => info.status === "running" && info.logicId === LOOP_ID,
  );
  for (const { executionId } of unfinished) {
    await asWriter(executionId, async () => {
      const log = await app.log(executionId);
      const recorded = new Set(log.filter((r) => r.type === STEP_COMPLETED).map((r) => String(r.stepId)));
      const actor = await app.resume(executionId);
      actors.set(executionId, actor);
      factsOf(executionId).resumed = { report: actor.replay, recorded };
    });
    selected ??= executionId;
  }
}

async function startRun(prompt: string): Promise<void> {
  const executionId = `run-${Date.now().toString(36)}`;
  selected = executionId;
  await asWriter(executionId, async () =>
    actors.set(executionId, await app.start(researchLoop, { executionId, input: { prompt } })),
  );
}

/** Redraws the list, then the selected execution's timeline from its journal (newest read wins). */
async function draw(): Promise<void> {
  selected ??= [...executions].sort((a, b) => b.startedAt - a.startedAt)[0]?.executionId;
  renderExecutions(ui.list, executions, selected, factsOf, (id) => {
    selected = id;
    void draw();
  });
  const turn = ++drawn;
  const info = executions.find((e) => e.executionId === selected);
  const records: JournalRecord[] = info ? await app.log(info.executionId) : [];
  if (turn !== drawn) return;
  renderDetail(ui.detail, info, records, factsOf(selected ?? ""));
  renderApprovals(info);
}

/** A tool call waiting for the user (needsApproval), from the read models: approve or deny it here. */
function renderApprovals(info: ExecutionInfo | undefined): void {
  const actor = info && actors.get(info.executionId);
  const pending = (info && models.execution(info.executionId)?.pendingApprovals) ?? [];
  if (!actor || pending.length === 0) return;
  const decide = (toolCallId: string, approved: boolean) => () =>
    void actor.sendAsync({ type: TOOL_APPROVAL_EVENT, toolCallId, approved }).catch(fail);
  ui.detail.prepend(
    el(
      "div",
      { class: "banner approval", "data-testid": "approval" },
      ...pending.flatMap((a) => [
        el("p", {}, `The agent asks to run ${a.toolName}: ${JSON.stringify(a.input).slice(0, 160)}`),
        el("button", { type: "button", "data-approve": a.toolCallId, onclick: decide(a.toolCallId, true) }, "Approve"),
        el(
          "button",
          { type: "button", class: "quiet", "data-deny": a.toolCallId, onclick: decide(a.toolCallId, false) },
          "Deny",
        ),
      ]),
    ),
  );
}

function showNetwork(): void {
  ui.network.textContent = navigator.onLine ? "online · not used" : "offline";
  ui.network.className = `chip ${navigator.onLine ? "online" : "offline"}`;
}

function fail(error: unknown): void {
  ui.detail.prepend(
    el("p", { class: "banner error" }, error instanceof Error ? `${error.name}: ${error.message}` : String(error)),
  );
}

ui.prompt.value = DEFAULT_PROMPT;
ui.form.addEventListener("submit", (event) => {
  event.preventDefault();
  startRun(ui.prompt.value.trim() || DEFAULT_PROMPT).catch(fail);
});
ui.clear.addEventListener("click", () => {
  const finished = executions.filter((e) => e.status !== "running");
  Promise.all(finished.map((e) => stores.events.deleteHistory(e.executionId))).catch(fail);
});
addEventListener("online", showNetwork);
addEventListener("offline", showNetwork);
showNetwork();

await models.ready;
await resumeUnfinished().catch(fail);
watchExecutions(
  stores,
  (list) => {
    executions = list;
    draw().catch(fail);
  },
  { onError: fail },
);
document.body.dataset.ready = "true";
