// Plain DOM rendering for the story: the execution list and one execution's timeline, built from the
// catalogue (ExecutionInfo) and the journal (app.log). No framework: each render replaces a container.
import {
  EXECUTION_ENDED,
  EXECUTION_STARTED,
  STEP_COMPLETED,
  STEP_FAILED,
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

/** What this page load knows about an execution beyond its journal. */
export interface LocalFacts {
  /** Set when this page load resumed the execution: what the replay did, and the steps recorded before it. */
  resumed?: { report: ReplayReport; recorded: Set<string> };
  /** Step ids this page load ran live (the rest came from the journal). */
  ranHere: Set<string>;
  /** Another tab holds the execution's writer lock. */
  elsewhere: boolean;
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
        local.elsewhere && info.status === "running"
          ? "running in another tab"
          : local.resumed
            ? "resumed after reload"
            : "";
      return el(
        "li",
        {},
        el(
          "button",
          {
            class: `execution${info.executionId === selected ? " selected" : ""}`,
            "data-execution": info.executionId,
            "data-status": info.status,
            onclick: () => onSelect(info.executionId),
          },
          el("span", { class: "row" }, el("code", {}, info.executionId), pill(info.status)),
          el(
            "span",
            { class: "row muted" },
            `${info.head} records · ${time(info.startedAt)}`,
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
        el("span", { class: "muted" }, `${info.head} records · started ${time(info.startedAt)}`),
      ),
      resumed &&
        el(
          "p",
          { class: "banner", "data-testid": "resumed" },
          el("strong", {}, "Resumed after a reload. "),
          `Rebuilt from ${resumed.report.fromSnapshotSeq ? `the snapshot at seq ${resumed.report.fromSnapshotSeq} plus ` : ""}${resumed.report.recordsReplayed} replayed records; `,
          `${resumed.recorded.size} recorded steps served from IndexedDB; ${resumed.report.stepsToRun} step${resumed.report.stepsToRun === 1 ? " that was" : "s that were"} in flight at the reload ran again. `,
          el("span", { "data-testid": "reruns" }, `Recorded calls repeated: ${reruns}.`),
        ),
      local.elsewhere &&
        info.status === "running" &&
        el(
          "p",
          { class: "banner warn" },
          "Another tab holds this execution's writer lock (Web Locks) and is running it; this tab only watches.",
        ),
      answer !== undefined && el("blockquote", { class: "answer", "data-testid": "answer" }, answer),
      el(
        "h3",
        {},
        "Timeline ",
        el("span", { class: "muted" }, "one row per macrostep: its input record and the transition journaled with it"),
      ),
      el("ol", { class: "timeline" }, ...macrosteps(records).map((group) => timelineRow(group, local))),
    ]),
  );
}
