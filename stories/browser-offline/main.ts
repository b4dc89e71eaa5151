// Story: an agent that runs entirely in this tab, journaled to IndexedDB, with no network. Reload the
// page mid-run: on load the unfinished execution is resumed from the journal (under its Web Lock, so a
// second tab watches instead of racing, and takes the run over if the tab running it closes), and no
// recorded model or tool call runs again. The list of executions is a live Dexie query of the catalogue;
// the timeline is the execution's journal. Every storage failure is a message that says what to do.
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
import {
  indexedDbStores,
  takeOverWhenReleased,
  watchExecutions,
  type IndexedDbStores,
} from "../../adapters/indexeddb/index.js";
import { DEFAULT_PROMPT, LOOP_ID, researchEffects, researchLoop } from "./agent.js";
import {
  BLOCKED,
  explainFailure,
  pendingApprovals,
  plural,
  renderApproval,
  renderDetail,
  renderExecutions,
  renderFailure,
  type ChildTimeline,
  type Failure,
  type LocalFacts,
  type ResumeCause,
} from "./view.js";

const DATABASE = "loomwork-browser-offline";
// ?pace=<ms> per tool call (a model call takes half): slow enough by default to reload mid-run.
const pace = Number(new URLSearchParams(location.search).get("pace") ?? 800);

// A tab that reloads lets the lock go and takes it back as it boots: the watcher leaves it that long first.
const TAKEOVER_GRACE_MS = 5_000;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const ui = {
  form: $<HTMLFormElement>("run"),
  prompt: $<HTMLInputElement>("prompt"),
  runButton: $<HTMLButtonElement>("run-button"),
  list: $<HTMLUListElement>("executions"),
  detail: $<HTMLElement>("detail"),
  alerts: $<HTMLElement>("alerts"),
  announce: $<HTMLElement>("announce"),
  network: $<HTMLElement>("network"),
  storage: $<HTMLElement>("storage"),
  calls: $<HTMLElement>("calls"),
  clear: $<HTMLButtonElement>("clear"),
};

// Registered before anything is awaited: until the journal is open "Run agent" is disabled, and Enter in the
// prompt does nothing, never a native form GET to /?prompt=.
let onRun: ((prompt: string) => void) | undefined;
ui.form.addEventListener("submit", (event) => {
  event.preventDefault();
  onRun?.(ui.prompt.value.trim() || DEFAULT_PROMPT);
});

const failures = new Map<string, Failure>();
function showFailure(failure: Failure): void {
  failures.set(failure.kind, failure);
  ui.alerts.replaceChildren(...[...failures.values()].map((f) => renderFailure(f, () => location.reload())));
}
function clearFailure(kind: string): void {
  if (failures.delete(kind))
    ui.alerts.replaceChildren(...[...failures.values()].map((f) => renderFailure(f, () => location.reload())));
}
function fail(error: unknown): void {
  showFailure(explainFailure(error));
}
/** Says `text` to screen readers (a polite live region); the page shows the same thing visually. */
function announce(text: string): void {
  ui.announce.textContent = text;
}

function showNetwork(): void {
  ui.network.textContent = navigator.onLine ? "online · not used" : "offline";
  ui.network.className = `chip ${navigator.onLine ? "online" : "offline"}`;
}
addEventListener("online", showNetwork);
addEventListener("offline", showNetwork);
showNetwork();

// docs/storage.md: storage is best-effort, and may be evicted under pressure, unless the site asks to persist.
async function requestPersistence(): Promise<void> {
  const storage = navigator.storage as StorageManager | undefined;
  const persisted = (await storage?.persisted?.()) || (await storage?.persist?.()) || false;
  ui.storage.textContent = persisted ? "storage: persistent" : "storage: best-effort";
  ui.storage.title = persisted
    ? "The browser will not evict this site's journal under storage pressure."
    : "The browser did not grant persistent storage: under storage pressure it may evict this site's journal.";
}

// The shell (page, script, style) cached by a service worker, so a reload offline or with the server gone
// loads the page and resumes the run (sw.js; docs/storage.md, "Offline reloads").
function registerShell(): void {
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register("./sw.js").catch(() => {
    // Not fatal: without it the page still runs offline once loaded; only a reload offline fails.
  });
}

/** How this page load began: a reload, or a fresh open (the page that ran an unfinished run closed or crashed). */
const arrival: ResumeCause =
  (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined)?.type === "reload"
    ? "reload"
    : "opened";

async function boot(): Promise<void> {
  void requestPersistence().catch(() => (ui.storage.textContent = "storage: best-effort"));
  registerShell();
  const stores: IndexedDbStores = await indexedDbStores({
    name: DATABASE,
    onBlocked: () => showFailure(BLOCKED),
    onConnectionLost: (error) => {
      fail(error);
      for (const id of actors.keys()) factsOf(id).stopped ??= "the journal is gone";
      void draw();
    },
  });
  clearFailure(BLOCKED.kind);

  const facts = new Map<string, LocalFacts>();
  function factsOf(id: string): LocalFacts {
    let local = facts.get(id);
    if (!local) facts.set(id, (local = { ranHere: new Set(), elsewhere: false }));
    return local;
  }
  const calls = { model: 0, tool: 0 };
  let executions: ExecutionInfo[] = [];
  let selected: string | undefined;
  let drawn = 0;
  // The actors this tab runs (start, resume or takeover), to send an approval to.
  const actors = new Map<string, JournaledActor>();
  // Executions this tab starts (listed before app.start returns), and those it waits to take over.
  const mine = new Set<string>();
  const waiting = new Set<string>();
  // A decision made in a tab that only watches goes to the tab that runs the execution.
  const decisions = new BroadcastChannel(`${DATABASE}:approvals`);

  function countCall(ctx: EffectContext): void {
    factsOf(ctx.executionId).ranHere.add(ctx.stepId);
    calls[ctx.effectId === "model" ? "model" : "tool"]++;
    ui.calls.textContent = `This page load: ${plural(calls.model, "model call")}, ${plural(calls.tool, "tool call")}`;
  }

  const app = createApp(
    defineConfig({
      stores,
      effects: researchEffects(pace, countCall),
      logics: [researchLoop],
      execution: { snapshotEvery: 16 },
    }),
  );

  /** Follows a run this tab holds to its end; a failure (out of storage, the database gone) is shown, not swallowed. */
  function follow(executionId: string): void {
    app.result(executionId).then(
      () => {
        announce(`Execution ${executionId} finished.`);
        return draw();
      },
      (error: unknown) => {
        stopped(executionId, error);
        return draw();
      },
    );
  }

  /** The run stopped in this tab on `error`: the list and the timeline say so, and the message says what to do. */
  function stopped(executionId: string, error: unknown): void {
    actors.delete(executionId);
    factsOf(executionId).stopped = explainFailure(error).kind === "quota" ? "out of storage" : "failed";
    fail(error);
  }

  /** Resumes `executionId` in this tab (its lock taken, or lent by a takeover); records what was recorded before. */
  async function resumeHere(executionId: string, cause: ResumeCause): Promise<JournaledActor> {
    const recordedIn = async (id: string) =>
      new Set((await app.log(id)).filter((r) => r.type === STEP_COMPLETED).map((r) => String(r.stepId)));
    const recorded = await recordedIn(executionId);
    // Its sub-agents resume with it: what each had recorded is told apart in its nested rows too.
    const children = (await app.executions({ root: executionId })).filter((e) => e.executionId !== executionId);
    const childRecorded = await Promise.all(children.map((child) => recordedIn(child.executionId)));
    const actor = await app.resume(executionId);
    children.forEach((child, i) => {
      factsOf(child.executionId).resumed = { cause, report: actor.replay, recorded: childRecorded[i]! };
    });
    actors.set(executionId, actor);
    const local = factsOf(executionId);
    local.resumed = { cause, report: actor.replay, recorded };
    local.elsewhere = false;
    follow(executionId);
    return actor;
  }

  /** On load: resume every unfinished run of this page's agent that no other tab holds. */
  async function resumeUnfinished(): Promise<void> {
    const unfinished = (await stores.events.listExecutions()).filter(
      (info) => info.status === "running" && info.logicId === LOOP_ID,
    );
    for (const { executionId } of unfinished) {
      try {
        await resumeHere(executionId, arrival);
      } catch (error) {
        if (error instanceof WriterLockedError) watch(executionId);
        else stopped(executionId, error);
      }
      selected ??= executionId;
    }
  }

  /** Another tab runs `executionId`: watch it, and take it over (resume it here) if that tab lets go before it ends. */
  function watch(executionId: string): void {
    if (waiting.has(executionId) || actors.has(executionId) || mine.has(executionId)) return;
    if (factsOf(executionId).stopped) return; // failed here (out of storage): a reload retries, not a loop
    waiting.add(executionId);
    factsOf(executionId).elsewhere = true;
    takeOverWhenReleased(stores, { resume: (id) => resumeHere(id, "takeover") }, executionId, {
      graceMs: TAKEOVER_GRACE_MS,
    })
      .then((actor) => {
        if (actor) announce(`This tab took over execution ${executionId}.`);
        factsOf(executionId).elsewhere = false;
      })
      .catch(fail)
      .finally(() => {
        waiting.delete(executionId);
        void draw();
      });
  }

  async function startRun(prompt: string): Promise<void> {
    const executionId = `run-${Date.now().toString(36)}`;
    selected = executionId;
    mine.add(executionId);
    actors.set(executionId, await app.start(researchLoop, { executionId, input: { prompt } }));
    announce(`Started execution ${executionId}.`);
    follow(executionId);
  }

  function decide(executionId: string, toolCallId: string, approved: boolean): void {
    const decision = { type: TOOL_APPROVAL_EVENT, toolCallId, approved } as const;
    const actor = actors.get(executionId);
    if (actor) actor.sendAsync(decision).catch(fail);
    else decisions.postMessage({ executionId, decision });
    announce(approved ? "Approved." : "Denied.");
  }
  decisions.onmessage = (message: MessageEvent<{ executionId: string; decision: { type: string } }>) => {
    const { executionId, decision } = message.data;
    actors.get(executionId)?.sendAsync(decision).catch(fail);
  };

  // Keyboard focus survives a redraw: the element with the same identity (an execution, a decision) gets it back.
  const FOCUS_KEYS = ["data-execution", "data-approve", "data-deny"];
  function focusKey(node: Element | null): string | undefined {
    const key = FOCUS_KEYS.find((name) => node?.hasAttribute(name));
    return key && node ? `[${key}="${CSS.escape(node.getAttribute(key) ?? "")}"]` : undefined;
  }

  /** Redraws the list, then the selected execution's timeline from its journal (newest read wins). */
  async function draw(): Promise<void> {
    selected ??= [...roots(executions)].sort((a, b) => b.startedAt - a.startedAt)[0]?.executionId;
    const focused = focusKey(document.activeElement);
    // Sub-agents (child executions) are shown nested in their root's timeline, not as runs of their own.
    renderExecutions(ui.list, roots(executions), selected, factsOf, (id) => {
      selected = id;
      void draw();
    });
    // The list is redrawn at once: its focus too, even when a newer draw overtakes this one's timeline.
    const restore = () => {
      if (focused) (document.querySelector(focused) as HTMLElement | null)?.focus();
    };
    restore();
    const turn = ++drawn;
    const info = executions.find((e) => e.executionId === selected);
    const records: JournalRecord[] = info ? await app.log(info.executionId) : [];
    const children: ChildTimeline[] = await Promise.all(
      executions
        .filter((e) => info !== undefined && e.parentId === info.executionId)
        .map(async (child) => ({
          info: child,
          records: await app.log(child.executionId),
          local: factsOf(child.executionId),
        })),
    );
    if (turn !== drawn) return;
    const pending = info?.status === "running" && !factsOf(info.executionId).stopped ? pendingApprovals(records) : [];
    const approval =
      info && pending.length > 0
        ? renderApproval(pending, actors.has(info.executionId) ? "here" : "elsewhere", (toolCallId, approved) =>
            decide(info.executionId, toolCallId, approved),
          )
        : undefined;
    renderDetail(ui.detail, info, records, factsOf(selected ?? ""), approval, children);
    restore();
  }

  ui.clear.addEventListener("click", () => {
    const finished = executions.filter((e) => e.status !== "running");
    Promise.all(finished.map((e) => stores.events.deleteHistory(e.executionId))).catch(fail);
  });

  await resumeUnfinished();
  watchExecutions(
    stores,
    (list) => {
      executions = list;
      for (const info of list) if (info.status === "running" && info.logicId === LOOP_ID) watch(info.executionId);
      draw().catch(fail);
    },
    { onError: fail },
  );
  onRun = (prompt) => void startRun(prompt).catch(fail);
  ui.runButton.disabled = false;
  document.body.dataset.ready = "true";
}

/** The executions a user started (a sub-agent has a parent). */
function roots(list: ExecutionInfo[]): ExecutionInfo[] {
  return list.filter((info) => info.parentId === undefined);
}

ui.prompt.value = DEFAULT_PROMPT;
boot().catch((error: unknown) => {
  fail(error);
  document.body.dataset.ready = "failed";
});
