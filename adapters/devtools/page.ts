// The devtools page in plain DOM: the statechart in SVG with the current state highlighted, the journal as a
// timeline with time travel by seq, the context at that seq, the tree of executions and the pending approvals.
// No framework and no run-time import: the served page loads it as it is; where its data comes from is a
// `DevtoolsSource` (the CLI's HTTP endpoints, or an app's own stores).
import { layoutGraph, stateLines, type LayoutEngine, type Placed } from "./layout.js";
import {
  activeNodeIds,
  stateAtSeq,
  valueText,
  type DevtoolsEntry,
  type DevtoolsExecution,
  type DevtoolsModel,
  type DevtoolsState,
} from "./view.js";

/** Where the page reads its data and sends decisions. */
export interface DevtoolsSource {
  /** The executions, as a tree (children under their parent). */
  tree(): Promise<DevtoolsExecution[]>;
  /** One execution's model. */
  model(executionId: string): Promise<DevtoolsModel>;
  /** Approve or deny a tool call that waits for a human; without it the page shows the calls with no buttons. */
  decide?(executionId: string, toolCallId: string, approved: boolean, reason?: string): Promise<void>;
}

/** Options of `renderDevtools`. */
export interface DevtoolsPageOptions {
  /** Lays out the statechart: an elkjs `ELK` instance (`new ELK()`). */
  elk: LayoutEngine;
  /** How often the page re-reads the executions to follow them live, in ms; 0 to read once. @defaultValue 1000 */
  pollMs?: number;
  /** The execution shown first. @defaultValue the first running one, else the first */
  executionId?: string;
  /** The page's heading. @defaultValue "loomwork devtools" */
  title?: string;
  /** Keep the shown execution and seq in the URL's hash (`#<executionId>@<seq>`), so a reload shows the same. @defaultValue false */
  syncHash?: boolean;
}

/** The mounted page. */
export interface DevtoolsPage {
  /** Shows an execution. */
  select(executionId: string): Promise<void>;
  /** Time travel: shows the state at `seq`; `undefined` follows the head live. */
  travel(seq: number | undefined): void;
  /** Re-reads the executions and the shown execution now. */
  refresh(): Promise<void>;
  /** Stops polling and empties the element. */
  close(): void;
}

const SVG = "http://www.w3.org/2000/svg";

const STYLE = `
.loom-devtools { font: 13px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; background: #ffffff;
  display: grid; grid-template-columns: minmax(180px, 240px) minmax(0, 1fr) minmax(240px, 360px); gap: 12px; padding: 12px; }
.loom-devtools h1 { grid-column: 1 / -1; font-size: 18px; margin: 0; }
.loom-devtools h2 { font-size: 14px; margin: 0 0 6px; }
.loom-devtools section { border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 10px; min-width: 0; }
.loom-devtools ul { list-style: none; margin: 0; padding: 0 0 0 12px; }
.loom-devtools > .loom-tree > ul { padding-left: 0; }
.loom-devtools button { font: inherit; color: #1f2328; background: #f6f8fa; border: 1px solid #8c959f; border-radius: 6px;
  padding: 2px 8px; cursor: pointer; }
.loom-devtools button[aria-current] { background: #ddf4ff; border-color: #0550ae; font-weight: 600; }
.loom-devtools button.loom-approve { background: #1f7f3b; border-color: #1a6b32; color: #ffffff; }
.loom-devtools button.loom-deny { background: #b42318; border-color: #9a1d14; color: #ffffff; }
.loom-devtools :focus-visible { outline: 3px solid #0969da; outline-offset: 2px; }
.loom-devtools .loom-muted { color: #57606a; }
.loom-devtools .loom-status { font-weight: 600; }
.loom-devtools .loom-chart { overflow: auto; max-height: 70vh; }
.loom-devtools .loom-chart svg { display: block; }
.loom-devtools .loom-state rect { fill: #ffffff; stroke: #6e7781; stroke-width: 1.2; }
.loom-devtools .loom-state.loom-compound > rect { fill: #f6f8fa; }
.loom-devtools .loom-state.loom-region > rect { stroke-dasharray: 5 3; fill: #ffffff; }
.loom-devtools .loom-state.loom-final rect { stroke-width: 3; }
.loom-devtools .loom-state.loom-active > rect { fill: #ddf4ff; stroke: #0550ae; stroke-width: 2.5; }
.loom-devtools .loom-state text { fill: #1f2328; }
.loom-devtools .loom-state text.loom-invoke { fill: #57606a; font-size: 11px; }
.loom-devtools .loom-edge path { fill: none; stroke: #57606a; stroke-width: 1.2; }
.loom-devtools .loom-edge.loom-taken path { stroke: #0550ae; stroke-width: 2.5; }
.loom-devtools .loom-edge rect { fill: #ffffff; }
.loom-devtools .loom-edge text { fill: #1f2328; font-size: 11px; }
.loom-devtools .loom-steps { max-height: 40vh; overflow: auto; padding: 0; }
.loom-devtools .loom-steps li { margin: 2px 0; }
.loom-devtools .loom-steps button { width: 100%; text-align: left; }
.loom-devtools .loom-records { padding: 0; }
.loom-devtools .loom-records li { border-top: 1px solid #eaeef2; padding: 2px 0; overflow-wrap: anywhere; }
.loom-devtools .loom-badge { display: inline-block; border-radius: 10px; padding: 0 6px; font-size: 11px; font-weight: 600;
  border: 1px solid currentColor; }
.loom-devtools .loom-ok { color: #1a6b32; }
.loom-devtools .loom-fail { color: #b42318; }
.loom-devtools pre { margin: 0; max-height: 30vh; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere;
  background: #f6f8fa; padding: 6px; border-radius: 6px; }
.loom-devtools label { display: block; }
.loom-devtools input[type=range] { width: 100%; }
.loom-devtools .loom-approval { border-top: 1px solid #eaeef2; padding: 6px 0; }
.loom-devtools .loom-approval input[type=text] { font: inherit; width: 100%; box-sizing: border-box; margin: 4px 0; }
@media (prefers-reduced-motion: no-preference) {
  .loom-devtools .loom-state > rect, .loom-devtools .loom-edge path { transition: fill 160ms, stroke 160ms; }
}
`;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | undefined> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

function svg(tag: string, attrs: Record<string, string | number>, ...children: Node[]): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  node.append(...children);
  return node;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

const time = (at: number) => new Date(at).toISOString().slice(11, 23);

function flatten(tree: DevtoolsExecution[]): DevtoolsExecution[] {
  return tree.flatMap((e) => [e, ...flatten(e.children)]);
}

/**
 * Draws the devtools page into `element` and keeps it live: the executions from `source`, the statechart of
 * the selected one laid out by `options.elk`, its timeline with time travel, its context and its approvals.
 *
 * @example
 * import ELK from "elkjs/lib/elk.bundled.js";
 * const page = renderDevtools(document.getElementById("devtools")!, source, { elk: new ELK() });
 */
export function renderDevtools(
  element: HTMLElement,
  source: DevtoolsSource,
  options: DevtoolsPageOptions,
): DevtoolsPage {
  const pollMs = options.pollMs ?? 1000;
  const root = el("div", { class: "loom-devtools" });
  const style = el("style", {}, STYLE);
  const live = el("p", { class: "loom-muted", "aria-live": "polite", role: "status" });
  const treeSection = el("section", { class: "loom-tree", "aria-labelledby": "loom-h-tree" });
  const chartSection = el("section", { class: "loom-chart-section", "aria-labelledby": "loom-h-chart" });
  const sideSection = el("section", { class: "loom-side", "aria-labelledby": "loom-h-time" });
  const approvalsSection = el("section", { class: "loom-approvals", "aria-labelledby": "loom-h-approvals" });
  const header = el("div", {}, el("h1", {}, options.title ?? "loomwork devtools"), live);
  header.style.gridColumn = "1 / -1";
  const left = el("div", {}, treeSection, approvalsSection);
  left.style.display = "grid";
  left.style.gap = "12px";
  left.style.alignContent = "start";
  root.append(header, left, chartSection, sideSection);
  element.replaceChildren(style, root);

  let tree: DevtoolsExecution[] = [];
  let selected: string | undefined = options.executionId;
  let model: DevtoolsModel | undefined;
  let seq: number | undefined; // undefined: follow the head
  if (options.syncHash && location.hash.length > 1) {
    const [id, at] = decodeURIComponent(location.hash.slice(1)).split(/@(?=\d+$)/);
    if (id) selected = id;
    if (at) seq = Number(at);
  }
  const remember = () => {
    if (options.syncHash && selected)
      history.replaceState(null, "", `#${encodeURIComponent(selected)}${seq === undefined ? "" : `@${seq}`}`);
  };
  let placed: { key: string; placed: Placed } | undefined;
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let error: string | undefined;

  const announce = (text: string) => {
    if (live.textContent !== text) live.textContent = text;
  };

  // Focus is kept across redraws: the focused control's key is found again in the new DOM.
  const redraw = (section: HTMLElement, ...children: Node[]) => {
    const active = document.activeElement;
    const key = active instanceof HTMLElement && section.contains(active) ? active.dataset.key : undefined;
    section.replaceChildren(...children);
    if (key) section.querySelector<HTMLElement>(`[data-key="${CSS.escape(key)}"]`)?.focus();
  };

  const shownState = (): DevtoolsState | undefined =>
    model ? (seq === undefined ? model.states.at(-1) : stateAtSeq(model, seq)) : undefined;

  const drawTree = () => {
    const list = (nodes: DevtoolsExecution[]): HTMLUListElement =>
      el(
        "ul",
        {},
        ...nodes.map((n) => {
          const button = el(
            "button",
            {
              type: "button",
              "data-key": `exec:${n.executionId}`,
              "aria-current": n.executionId === selected ? "true" : undefined,
            },
            n.childId ? `${n.childId} ` : "",
            el("span", {}, n.executionId),
          );
          button.addEventListener("click", () => void select(n.executionId));
          return el(
            "li",
            {},
            button,
            " ",
            el("span", { class: "loom-muted" }, `${n.logicId ?? "?"} · ${n.status} · ${plural(n.head, "record")}`),
            ...(n.children.length ? [list(n.children)] : []),
          );
        }),
      );
    redraw(
      treeSection,
      el("h2", { id: "loom-h-tree" }, "Executions"),
      tree.length ? list(tree) : el("p", { class: "loom-muted" }, "No executions in these stores yet."),
    );
  };

  const drawApprovals = () => {
    const pending = model?.pending ?? [];
    const items = pending.map((a) => {
      const reason = el("input", {
        type: "text",
        id: `loom-reason-${a.toolCallId}`,
        "data-key": `reason:${a.toolCallId}`,
      });
      const decide = (approved: boolean) => async () => {
        if (!source.decide || !model) return;
        const id = model.executionId;
        try {
          await source.decide(id, a.toolCallId, approved, approved ? undefined : reason.value || undefined);
          announce(`${approved ? "Approved" : "Denied"} ${a.toolName} (${a.toolCallId}) in ${id}.`);
          await refresh();
        } catch (e) {
          announce(`Could not decide ${a.toolCallId}: ${e instanceof Error ? e.message : String(e)}`);
        }
      };
      const approve = el(
        "button",
        { type: "button", class: "loom-approve", "data-key": `approve:${a.toolCallId}` },
        `Approve ${a.toolName}`,
      );
      const deny = el(
        "button",
        { type: "button", class: "loom-deny", "data-key": `deny:${a.toolCallId}` },
        `Deny ${a.toolName}`,
      );
      approve.addEventListener("click", () => void decide(true)());
      deny.addEventListener("click", () => void decide(false)());
      return el(
        "div",
        { class: "loom-approval" },
        el("div", {}, el("strong", {}, a.toolName), " ", el("span", { class: "loom-muted" }, a.toolCallId)),
        el("pre", {}, JSON.stringify(a.input, null, 2)),
        ...(source.decide
          ? [
              el("label", { for: `loom-reason-${a.toolCallId}` }, "Reason for a denial (optional)"),
              reason,
              el("div", {}, approve, " ", deny),
            ]
          : [el("p", { class: "loom-muted" }, "Decide with loomwork approve / deny, or in the app.")]),
      );
    });
    redraw(
      approvalsSection,
      el("h2", { id: "loom-h-approvals" }, `Waiting for approval (${pending.length})`),
      ...(items.length ? items : [el("p", { class: "loom-muted" }, "No tool call waits for a human.")]),
    );
  };

  const drawChart = async () => {
    if (!model) {
      redraw(chartSection, el("h2", { id: "loom-h-chart" }, "Statechart"), el("p", {}, error ?? "Loading…"));
      return;
    }
    const graph = model.graph;
    const key = JSON.stringify([graph.nodes.map((n) => n.id), graph.transitions.map((t) => t.id)]);
    if (placed?.key !== key) placed = { key, placed: await layoutGraph(options.elk, graph) };
    if (closed || !model) return;
    const state = shownState();
    const active = activeNodeIds(graph.machineId, state?.value);
    const taken = takenTransition();
    const p = placed.placed;
    const chart = svg("svg", {
      width: Math.ceil(p.width),
      height: Math.ceil(p.height),
      viewBox: `0 0 ${Math.ceil(p.width)} ${Math.ceil(p.height)}`,
      role: "img",
      "aria-labelledby": "loom-chart-title",
    });
    const title = svg("title", { id: "loom-chart-title" });
    title.textContent = `Statechart of ${graph.machineId}; active: ${state ? valueText(state.value) : "none"}`;
    chart.append(
      title,
      svg(
        "defs",
        {},
        svg(
          "marker",
          {
            id: "loom-arrow",
            viewBox: "0 0 10 10",
            refX: 9,
            refY: 5,
            markerUnits: "userSpaceOnUse",
            markerWidth: 9,
            markerHeight: 9,
            orient: "auto",
          },
          svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#57606a" }),
        ),
      ),
    );
    const parents = new Map(graph.nodes.map((n) => [n.id, n]));
    for (const node of graph.nodes) {
      const box = p.states.get(node.id);
      if (!box) continue;
      const parentNode = node.parent ? parents.get(node.parent) : undefined;
      const compound = graph.nodes.some((n) => n.parent === node.id);
      const classes = [
        "loom-state",
        compound ? "loom-compound" : "",
        parentNode?.type === "parallel" ? "loom-region" : "",
        node.type === "final" ? "loom-final" : "",
        // The root is always active: only the states below it are highlighted.
        node.parent && active.has(node.id) ? "loom-active" : "",
      ].filter(Boolean);
      const g = svg("g", { class: classes.join(" "), "data-state": node.id });
      g.append(svg("rect", { x: box.x, y: box.y, width: box.width, height: box.height, rx: 8 }));
      stateLines(node).forEach((line, i) => {
        const text = svg("text", {
          x: box.x + (node.initial ? 22 : 10),
          y: box.y + 20 + i * 18,
          ...(i === 0 ? { "font-weight": 600 } : { class: "loom-invoke" }),
        });
        text.textContent = i === 0 && node.type === "parallel" ? `${line} (parallel)` : line;
        g.append(text);
      });
      if (node.initial) g.append(svg("circle", { cx: box.x + 12, cy: box.y + 16, r: 4, fill: "#1f2328" }));
      chart.append(g);
    }
    for (const t of p.transitions) {
      const d = t.points.map((pt, i) => `${i ? "L" : "M"}${pt.x},${pt.y}`).join(" ");
      const g = svg("g", { class: `loom-edge${taken === t.id ? " loom-taken" : ""}` });
      g.append(svg("path", { d, "marker-end": "url(#loom-arrow)" }));
      if (t.label) {
        g.append(svg("rect", { x: t.label.x, y: t.label.y, width: t.label.width, height: t.label.height, rx: 3 }));
        const text = svg("text", { x: t.label.x + 4, y: t.label.y + 13 });
        text.textContent = t.label.text;
        g.append(text);
      }
      chart.append(g);
    }
    const wrap = el("div", { class: "loom-chart" });
    wrap.append(chart);
    redraw(
      chartSection,
      el("h2", { id: "loom-h-chart" }, `Statechart of ${graph.machineId}`),
      el(
        "p",
        { class: "loom-muted" },
        graph.from === "logic" ? "Drawn from the machine's definition." : "Inferred from the journal's transitions.",
      ),
      wrap,
    );
  };

  // The transition the shown macrostep took: the one from its previous state's leaf on its event.
  const takenTransition = (): string | undefined => {
    if (!model) return undefined;
    const state = shownState();
    if (!state) return undefined;
    const record = model.timeline.find(
      (e) => e.kind === "transition" && e.seq >= state.fromSeq && e.seq <= state.toSeq,
    );
    const event = record?.detail;
    if (!event) return undefined;
    const index = model.states.indexOf(state);
    const before = index > 0 ? activeNodeIds(model.graph.machineId, model.states[index - 1]!.value) : new Set();
    const after = activeNodeIds(model.graph.machineId, state.value);
    const pattern = (e: string) =>
      /\*/.test(e) ? new RegExp(`^${e.replace(/[.]/g, "\\.").replace(/\*/g, "\\d+")}$`) : e;
    return model.graph.transitions.find((t) => {
      const p = pattern(t.event);
      const matches = typeof p === "string" ? p === event : p.test(event);
      return matches && before.has(t.source) && after.has(t.target);
    })?.id;
  };

  const entryLine = (e: DevtoolsEntry): HTMLLIElement => {
    const badges: (Node | string)[] = [];
    if (e.outcome)
      badges.push(
        " ",
        el("span", { class: `loom-badge ${e.outcome === "completed" ? "loom-ok" : "loom-fail"}` }, e.outcome),
        " ",
        el("span", { class: "loom-badge loom-muted" }, "recorded: served from the journal on replay"),
      );
    return el(
      "li",
      {},
      el("span", { class: "loom-muted" }, `#${e.seq} ${time(e.at)} ${e.kind} `),
      el("strong", {}, e.label),
      ...badges,
      ...(e.detail ? [el("div", { class: "loom-muted" }, e.detail)] : []),
    );
  };

  const drawSide = () => {
    if (!model) {
      redraw(sideSection, el("h2", { id: "loom-h-time" }, "Timeline"));
      return;
    }
    const m = model;
    const state = shownState();
    const head = m.head;
    const slider = el("input", {
      type: "range",
      id: "loom-seq",
      min: "1",
      max: String(Math.max(1, head)),
      value: String(seq ?? head),
      "data-key": "seq",
      "aria-valuetext": state ? `seq ${seq ?? head}: ${valueText(state.value)}` : undefined,
    });
    slider.addEventListener("input", () => travel(Number(slider.value) >= head ? undefined : Number(slider.value)));
    const liveButton = el(
      "button",
      { type: "button", "data-key": "live", "aria-pressed": seq === undefined ? "true" : "false" },
      seq === undefined ? "Following the head live" : "Back to live",
    );
    liveButton.addEventListener("click", () => travel(undefined));
    const steps = el(
      "ol",
      { class: "loom-steps", "aria-label": "Macrosteps" },
      ...m.states.map((s, k) => {
        const input = m.timeline.find((e) => e.seq === s.fromSeq);
        const current = state === s;
        const button = el(
          "button",
          { type: "button", "data-key": `step:${s.fromSeq}`, "aria-current": current ? "step" : undefined },
          `#${s.fromSeq}${s.toSeq > s.fromSeq ? `–${s.toSeq}` : ""} ${input?.label ?? ""} → ${valueText(s.value)}`,
        );
        button.addEventListener("click", () => travel(k === m.states.length - 1 ? undefined : s.toSeq));
        return el("li", {}, button);
      }),
    );
    const records = state ? m.timeline.filter((e) => e.seq >= state.fromSeq && e.seq <= state.toSeq) : [];
    const inFlight = seq === undefined && m.replay.stepsInFlight.length > 0;
    redraw(
      sideSection,
      el("h2", { id: "loom-h-time" }, "Timeline"),
      el(
        "p",
        {},
        el("span", { class: "loom-status" }, `${m.executionId}: ${m.status}`),
        ` · ${plural(head, "record")} · ${plural(m.replay.stepsServedFromLog, "step")} recorded (a resume serves them from the journal)`,
        ...(inFlight ? [` · in flight, run again on resume: ${m.replay.stepsInFlight.join(", ")}`] : []),
      ),
      ...(m.note ? [el("p", { class: "loom-muted" }, m.note)] : []),
      el("label", { for: "loom-seq" }, `Time travel: seq ${seq ?? head} of ${head}`),
      slider,
      el("div", {}, liveButton),
      steps,
      el("h2", {}, `State at seq ${seq ?? head}`),
      el("p", {}, el("strong", {}, state ? valueText(state.value) : "before the first macrostep")),
      el("h2", {}, "Context"),
      el(
        "pre",
        { tabindex: "0", "aria-label": "Context" },
        state?.context === undefined ? "(not known without the machine)" : JSON.stringify(state.context, null, 2),
      ),
      el("h2", {}, "Records of this macrostep"),
      el("ul", { class: "loom-records" }, ...records.map(entryLine)),
    );
    // Keep the selected macrostep in view, without animation when the user prefers less motion.
    const current = steps.querySelector<HTMLElement>("[aria-current]");
    const reduce = typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;
    current?.scrollIntoView?.({ block: "nearest", behavior: reduce ? "auto" : "smooth" });
  };

  const draw = async () => {
    remember();
    drawTree();
    drawApprovals();
    drawSide();
    await drawChart();
    const state = shownState();
    if (model)
      announce(
        `${model.executionId} at seq ${seq ?? model.head} of ${model.head}: ${state ? valueText(state.value) : "not started"}, ${model.status}` +
          (model.pending.length ? `; ${model.pending.length} waiting for approval` : ""),
      );
  };

  const load = async () => {
    tree = await source.tree();
    const all = flatten(tree);
    if (!selected || !all.some((e) => e.executionId === selected))
      selected = (all.find((e) => e.status === "running") ?? all[0])?.executionId;
    const info = all.find((e) => e.executionId === selected);
    // The model is read again only when the execution has new records.
    if (selected && (!model || model.executionId !== selected || (info && info.head !== model.head)))
      model = await source.model(selected);
    if (!selected) model = undefined;
  };

  const refresh = async () => {
    try {
      await load();
      error = undefined;
    } catch (e) {
      error = `Could not read the executions: ${e instanceof Error ? e.message : String(e)}`;
      announce(error);
    }
    if (!closed) await draw();
  };

  const poll = async () => {
    if (closed) return;
    await refresh();
    if (!closed && pollMs > 0) timer = setTimeout(() => void poll(), pollMs);
  };

  async function select(executionId: string) {
    selected = executionId;
    seq = undefined;
    model = undefined;
    await refresh();
  }

  function travel(to: number | undefined) {
    seq = to;
    void draw();
  }

  void poll();
  return {
    select,
    travel,
    refresh,
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      element.replaceChildren();
    },
  };
}
