// Plain DOM rendering for the story: the execution list and one execution's timeline, built from the
// catalogue (ExecutionInfo) and the journal (app.log). No framework: each render replaces a container.
import {
  EVENT_RECEIVED,
  EXECUTION_ENDED,
  EXECUTION_STARTED,
  STEP_COMPLETED,
  STEP_FAILED,
  TOOL_APPROVAL_EVENT,
  TRANSITION,
  type ExecutionInfo,
  type JournalRecord,
  type ReplayReport,
} from "../../index.js";

type Child = Node | string | null | undefined | false;

/** `el("li", { class: "x", onclick }, ...children)`: attributes as strings, `on*` as listeners. */
export function el(
  tag: string,
  attributes: Record<string, string | ((event: Event) => void)> = {},
  ...children: Child[]
): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === "function") node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  node.append(...present(children));
  return node;
}

/** The children to render: conditionals written as `cond && el(...)` drop out. */
function present(children: Child[]): (Node | string)[] {
  return children.filter((child): child is Node | string => child !== null && child !== undefined && child !== false);
}

/** Why this page load resumed an execution: it told, truthfully, in the banner and the list. */
export type ResumeCause = "reload" | "opened" | "takeover";

/** What this page load knows about an execution beyond its journal. */
export interface LocalFacts {
  /** Set when this page load resumed the execution: why, what the replay did, and the steps recorded before it. */
  resumed?: { cause: ResumeCause; report: ReplayReport; recorded: Set<string> };
  /** Step ids this page load ran live (the rest came from the journal). */
  ranHere: Set<string>;
  /** Another tab holds the execution's writer lock. */
  elsewhere: boolean;
  /** The run stopped in this tab on a failure (out of storage, the database gone): it says so instead of "running". */
  stopped?: string;
}

/** `count` and the noun, singular or plural: "1 model call", "2 model calls". */
export const plural = (count: number, noun: string, nouns = `${noun}s`) => `${count} ${count === 1 ? noun : nouns}`;

/** A tool call parked for the user's decision, as the journal shows it. */
export interface Pending {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/**
 * The tool calls still waiting for approval after `records`: a model reply parks the calls it marks
 * `needsApproval`, a TOOL_APPROVAL event decides one, the end clears them. Read from the journal, so a tab that
 * only watches the run sees them as the tab that runs it does.
 */
export function pendingApprovals(records: JournalRecord[]): Pending[] {
  let pending: Pending[] = [];
  for (const record of records) {
    if (record.type === STEP_COMPLETED && record.effectId === "model") {
      const calls = (record.output as { toolCalls?: unknown[] } | null)?.toolCalls ?? [];
      for (const call of calls as { id?: string; toolName?: string; input?: unknown; needsApproval?: boolean }[])
        if (call.needsApproval === true && typeof call.id === "string")
          pending.push({ toolCallId: call.id, toolName: call.toolName ?? "?", input: call.input });
    } else if (record.type === EVENT_RECEIVED) {
      const event = record.event as { type: string; toolCallId?: string };
      if (event.type === TOOL_APPROVAL_EVENT) pending = pending.filter((p) => p.toolCallId !== event.toolCallId);
    } else if (record.type === EXECUTION_ENDED) pending = [];
  }
  return pending;
}

/** Where the decision goes: this tab runs the execution, or another tab does (the decision is sent there). */
export type ApprovalHolder = "here" | "elsewhere";

/** The approval card: what the agent asks to run, its input in full (field by field), Approve and Deny. */
export function renderApproval(
  pending: Pending[],
  holder: ApprovalHolder,
  decide: (toolCallId: string, approved: boolean) => void,
): HTMLElement {
  return el(
    "section",
    { class: "approval", "data-testid": "approval", "aria-labelledby": "approval-title" },
    el("h3", { id: "approval-title" }, pending.length === 1 ? "Your approval is needed" : "Your approvals are needed"),
    holder === "elsewhere" &&
      el(
        "p",
        { class: "where" },
        "This run is held by another tab of this site. Decide here and the decision is sent to that tab; ",
        "if that tab has closed, this one takes the run over first.",
      ),
    ...pending.map((a) =>
      el(
        "div",
        { class: "ask" },
        el("p", {}, "The agent asks to run ", el("code", {}, a.toolName)),
        fields(a.input),
        el(
          "div",
          { class: "actions" },
          el(
            "button",
            {
              type: "button",
              class: "primary",
              "data-approve": a.toolCallId,
              onclick: () => decide(a.toolCallId, true),
            },
            "Approve",
          ),
          el(
            "button",
            {
              type: "button",
              class: "secondary",
              "data-deny": a.toolCallId,
              onclick: () => decide(a.toolCallId, false),
            },
            "Deny",
          ),
        ),
      ),
    ),
  );
}

// A tool's input, one row a field, the full text wrapped (never cut mid-word); nested values as indented JSON.
function fields(input: unknown): HTMLElement {
  if (typeof input !== "object" || input === null)
    return el("pre", { class: "input" }, JSON.stringify(input, null, 2) ?? "");
  return el(
    "dl",
    { class: "input" },
    ...Object.entries(input).flatMap(([key, value]) => [
      el("dt", {}, key),
      el("dd", {}, typeof value === "string" ? value : el("pre", {}, JSON.stringify(value, null, 2))),
    ]),
  );
}

/** A failure the user can act on: what happened, and what to do. */
export interface Failure {
  kind: string;
  title: string;
  action: string;
}

/** Explains `error` to the user: the storage failures by what to do, anything else by its name and message. */
export function explainFailure(error: unknown): Failure {
  const e = (error ?? {}) as { name?: string; message?: string; reason?: string };
  if (e.name === "StorageQuotaError")
    return {
      kind: "quota",
      title: "This browser has no room left for this site's journal.",
      action:
        "The run stopped before its next step, and nothing it had saved is lost. Free some space (Clear finished " +
        "executions here, or delete other sites' data in the browser's settings), then reload: the run resumes where it stopped.",
    };
  if (e.name === "IndexedDbConnectionError") {
    if (e.reason === "deleted" || e.reason === "vanished")
      return {
        kind: "deleted",
        title: "This site's journal was deleted (by another tab, or the site's data was cleared).",
        action: "Everything it held is gone, and this tab stopped writing. Reload to start with an empty journal.",
      };
    if (e.reason === "newer-version")
      return {
        kind: "newer-version",
        title: "Another tab upgraded this site's journal to a newer version.",
        action: "This tab runs an older version and stopped writing to it. Reload this page to get the newer version.",
      };
    if (e.reason === "unavailable")
      return {
        kind: "unavailable",
        title: "This browser offers no IndexedDB here (a private window may disable it).",
        action: "Open the page in a normal window of a current browser.",
      };
  }
  return {
    kind: "error",
    title: e.name && e.message ? `${e.name}: ${e.message}` : String(error),
    action: "Reload the page; an unfinished run resumes from the journal.",
  };
}

/** The alert for an open that waits on another tab. */
export const BLOCKED: Failure = {
  kind: "blocked",
  title: "Waiting for another tab of this site to let go of the journal.",
  action:
    "A tab running an older version of this page keeps the journal open while this one upgrades it. Close or reload " +
    "the other tabs of this site: this page goes on by itself.",
};

export function renderFailure(failure: Failure, onReload?: () => void): HTMLElement {
  return el(
    "div",
    { class: "banner error", role: "alert", "data-testid": `alert-${failure.kind}` },
    el("strong", {}, failure.title),
    " ",
    failure.action,
    onReload && el("button", { type: "button", class: "secondary", onclick: onReload }, "Reload"),
  );
}

const time = (at: number) =>
  new Date(at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const pill = (status: string) => el("span", { class: `pill ${status}` }, status);
const clip = (text: string, max = 90) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const inline = (value: unknown) =>
  clip(
    Object.values((value ?? {}) as object)
      .map(String)
      .join(", "),
    40,
  );

const RESUMED_NOTES: Record<ResumeCause, string> = {
  reload: "resumed after a reload",
  opened: "resumed when this page opened",
  takeover: "taken over from a closed tab",
};

const RESUMED_BANNERS: Record<ResumeCause, string> = {
  reload: "Resumed after a reload. ",
  opened: "Resumed when this page opened (the page that ran it had closed or crashed). ",
  takeover: "Taken over: the tab that ran it closed, so this tab resumed it. ",
};

export function renderExecutions(
  list: HTMLElement,
  executions: ExecutionInfo[],
  selected: string | undefined,
  facts: (id: string) => LocalFacts,
  onSelect: (id: string) => void,
): void {
  const newestFirst = [...executions].sort((a, b) => b.startedAt - a.startedAt);
  list.replaceChildren(
    ...newestFirst.map((info) => {
      const local = facts(info.executionId);
      const note =
        local.stopped && info.status === "running"
          ? `stopped: ${local.stopped}`
          : local.elsewhere && info.status === "running"
            ? "running in another tab"
            : local.resumed
              ? RESUMED_NOTES[local.resumed.cause]
              : "";
      return el(
        "li",
        {},
        el(
          "button",
          {
            class: `execution${info.executionId === selected ? " selected" : ""}`,
            ...(info.executionId === selected ? { "aria-current": "true" } : {}),
            "data-execution": info.executionId,
            "data-status": info.status,
            onclick: () => onSelect(info.executionId),
          },
          el("span", { class: "row" }, el("code", {}, info.executionId), pill(info.status)),
          el(
            "span",
            { class: "row muted" },
            `${plural(info.head, "record")} · ${time(info.startedAt)}`,
            note && el("em", {}, note),
          ),
        ),
      );
    }),
  );
  if (newestFirst.length === 0) list.replaceChildren(el("li", { class: "empty" }, "No executions yet: run the agent."));
}

/** One macrostep per row: its input record, and the transition (and end) journaled with it. */
function macrosteps(records: JournalRecord[]): JournalRecord[][] {
  const groups: JournalRecord[][] = [];
  for (const record of records) {
    const derived = record.type === TRANSITION || record.type === EXECUTION_ENDED || record.type === "loom.timer.set";
    if (derived && groups.length > 0) groups.at(-1)!.push(record);
    else groups.push([record]);
  }
  return groups;
}

function describe(input: JournalRecord): { kind: string; title: string; detail?: string } {
  if (input.type === EXECUTION_STARTED) {
    const prompt = (input.input as { prompt?: string } | null)?.prompt;
    return { kind: "start", title: prompt ? `“${prompt}”` : "started", detail: `logic ${String(input.logicId)}` };
  }
  const step = String(input.stepId ?? "");
  const turn = /#turn:(\d+)/.exec(step)?.[1];
  const where = turn === undefined ? step : `turn ${turn}`;
  if (input.type === STEP_FAILED)
    return {
      kind: String(input.effectId),
      title: `failed: ${(input.error as { message?: string })?.message ?? "error"}`,
      detail: where,
    };
  if (input.type !== STEP_COMPLETED)
    return { kind: input.type.replace(/^loom\./, ""), title: clip(JSON.stringify(input.event ?? input)) };
  const output = input.output as Record<string, unknown> | unknown[] | null;
  if (input.effectId === CHILD_STEP)
    return {
      kind: "sub-agent",
      title: `answered: ${clip(String((output as { text?: string } | null)?.text ?? ""), 120)}`,
      detail: where,
    };
  if (input.effectId === "model") {
    const reply = output as {
      text?: string;
      toolCalls?: { toolName: string; input: unknown }[];
      usage?: { inputTokens: number; outputTokens: number };
    };
    const calls = (reply.toolCalls ?? []).map((c) => `${c.toolName}(${inline(c.input)})`).join(", ");
    const usage = reply.usage ? ` · ${reply.usage.inputTokens} in / ${reply.usage.outputTokens} out tokens` : "";
    return {
      kind: "model",
      title: calls ? `${reply.text ?? ""} → ${calls}` : clip(reply.text ?? "", 120),
      detail: `${where}${usage}`,
    };
  }
  if (Array.isArray(output)) {
    const titles = output.map((hit) => (hit as { title?: string }).title ?? "?");
    return { kind: String(input.effectId), title: `${titles.length} hits: ${titles.join(", ")}`, detail: where };
  }
  const title = (output as { title?: string } | null)?.title;
  return {
    kind: String(input.effectId),
    title: title ? `read “${title}”` : clip(JSON.stringify(output)),
    detail: where,
  };
}

/** The effect id of a child execution's outcome in its parent's log. */
const CHILD_STEP = "loom.child";

/** A child execution of the shown one (a sub-agent), rendered nested in its timeline. */
export interface ChildTimeline {
  info: ExecutionInfo;
  records: JournalRecord[];
  local: LocalFacts;
}

// A sub-agent's own timeline, nested: its id, logic and status, then one row per macrostep of its log.
function childRow(child: ChildTimeline): HTMLElement {
  return el(
    "li",
    { class: "step subagent", "data-child": child.info.executionId },
    el("span", { class: "seq" }, "↳"),
    el(
      "div",
      { class: "body" },
      el(
        "div",
        { class: "row" },
        el("span", { class: "kind" }, "sub-agent"),
        el("span", { class: "title" }, el("code", {}, child.info.executionId), ` (${child.info.logicId ?? "?"})`),
        pill(child.info.status),
      ),
      el(
        "ol",
        { class: "timeline nested", "aria-label": `timeline of ${child.info.executionId}` },
        ...macrosteps(child.records).map((group) => timelineRow(group, child.local)),
      ),
    ),
    el("span"),
  );
}

const SOURCE_TITLES: Record<string, string> = {
  "ran now": "run live in this page load",
  replayed: "recorded before this page load resumed the run: served from the journal, not called again",
  journal: "read from the journal",
};

function timelineRow(group: JournalRecord[], local: LocalFacts): HTMLElement {
  const [input] = group as [JournalRecord, ...JournalRecord[]];
  const { kind, title, detail } = describe(input);
  const transition = group.find((r) => r.type === TRANSITION);
  const ended = group.find((r) => r.type === EXECUTION_ENDED);
  const step = typeof input.stepId === "string" ? input.stepId : undefined;
  const source =
    step === undefined
      ? undefined
      : local.ranHere.has(step)
        ? "ran now"
        : local.resumed?.recorded.has(step)
          ? "replayed"
          : "journal";
  const seqs = group.length > 1 ? `#${input.seq}–${group.at(-1)!.seq}` : `#${input.seq}`;
  return el(
    "li",
    {
      class: `step ${kind === "model" || kind === "start" ? kind : "tool"}`,
      ...(step ? { "data-step": step, "data-source": source ?? "" } : {}),
    },
    el("span", { class: "seq" }, seqs),
    el(
      "div",
      { class: "body" },
      el("div", { class: "row" }, el("span", { class: "kind" }, kind), el("span", { class: "title" }, title)),
      el(
        "div",
        { class: "row muted" },
        detail ?? "",
        transition && el("span", { class: "chip" }, `${String(transition.from ?? "·")} → ${String(transition.to)}`),
        ended && pill(String(ended.status)),
        el("span", { class: "at" }, time(input.at)),
      ),
    ),
    source
      ? el("span", { class: `source ${source.replace(" ", "-")}`, title: SOURCE_TITLES[source] ?? "" }, source)
      : el("span"),
  );
}

export function renderDetail(
  pane: HTMLElement,
  info: ExecutionInfo | undefined,
  records: JournalRecord[],
  local: LocalFacts,
  approval?: HTMLElement,
  children: ChildTimeline[] = [],
): void {
  if (!info) {
    pane.replaceChildren(el("p", { class: "empty" }, "Select an execution to see its timeline."));
    return;
  }
  const ended = records.find((r) => r.type === EXECUTION_ENDED);
  const answer = (ended?.output as { text?: string } | undefined)?.text;
  const resumed = local.resumed;
  const reruns = resumed ? [...local.ranHere].filter((id) => resumed.recorded.has(id)).length : 0;
  pane.replaceChildren(
    ...present([
      el(
        "div",
        { class: "detail-head" },
        el("h2", {}, el("code", {}, info.executionId)),
        pill(info.status),
        el("span", { class: "muted" }, `${plural(info.head, "record")} · started ${time(info.startedAt)}`),
      ),
      approval,
      resumed &&
        el(
          "p",
          { class: "banner", "data-testid": "resumed" },
          el("strong", {}, RESUMED_BANNERS[resumed.cause]),
          `Rebuilt from ${resumed.report.fromSnapshotSeq ? `the snapshot at seq ${resumed.report.fromSnapshotSeq} plus ` : ""}${plural(resumed.report.recordsReplayed, "replayed record")}; `,
          `${plural(resumed.recorded.size, "recorded step")} served from IndexedDB; ${plural(resumed.report.stepsToRun, "step")} ${resumed.report.stepsToRun === 1 ? "that was" : "that were"} in flight ran again. `,
          el("span", { "data-testid": "reruns" }, `Recorded calls repeated: ${reruns}.`),
        ),
      local.stopped &&
        info.status === "running" &&
        el("p", { class: "banner warn" }, `This run stopped in this tab: ${local.stopped}. See the message above.`),
      local.elsewhere &&
        !local.stopped &&
        info.status === "running" &&
        el(
          "p",
          { class: "banner warn" },
          "Another tab holds this execution's writer lock (Web Locks) and is running it; this tab watches, and takes ",
          "the run over if that tab closes before it ends.",
        ),
      answer !== undefined && el("blockquote", { class: "answer", "data-testid": "answer" }, answer),
      el(
        "h3",
        {},
        "Timeline ",
        el("span", { class: "muted" }, "one row per macrostep: its input record and the transition journaled with it"),
      ),
      el("ol", { class: "timeline" }, ...withChildren(info.executionId, macrosteps(records), local, children)),
    ]),
  );
}

// The timeline's rows, each sub-agent nested before the row where its parent took its answer (or at the end while it runs).
function withChildren(
  parentId: string,
  groups: JournalRecord[][],
  local: LocalFacts,
  children: ChildTimeline[],
): HTMLElement[] {
  const placed = new Set<string>();
  const rows: HTMLElement[] = [];
  for (const group of groups) {
    const [input] = group as [JournalRecord, ...JournalRecord[]];
    // A child's outcome step is `<machine>#<child id>:<occurrence>`; its execution, `<parent>/<child id>[#n]`.
    const step =
      input.type === STEP_COMPLETED && input.effectId === CHILD_STEP ? /#(.+):(\d+)$/.exec(String(input.stepId)) : null;
    const child =
      step &&
      children.find((c) => c.info.executionId === `${parentId}/${step[1]}${step[2] === "1" ? "" : `#${step[2]}`}`);
    if (child && !placed.has(child.info.executionId)) {
      placed.add(child.info.executionId);
      rows.push(childRow(child));
    }
    rows.push(timelineRow(group, local));
  }
  for (const child of children) if (!placed.has(child.info.executionId)) rows.push(childRow(child));
  return rows;
}
