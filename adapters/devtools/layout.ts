// The statechart's layout: the state tree handed to ELK as a compound graph (a compound or parallel state holds
// its children, every transition routed across the hierarchy), and ELK's answer in absolute coordinates.
// Imports nothing at run time: the served page loads it as it is, with ELK given by the caller.
import type { DevtoolsGraph } from "./view.js";

/** ELK's JSON graph, as much of it as the layout uses. */
export interface LayoutNode {
  id: string;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  children?: LayoutNode[];
  edges?: LayoutEdge[];
  labels?: { text?: string; x?: number; y?: number; width?: number; height?: number }[];
  layoutOptions?: Record<string, string>;
}

/** An edge of ELK's JSON graph, with the route ELK gives it. */
export interface LayoutEdge {
  id: string;
  sources: string[];
  targets: string[];
  labels?: LayoutNode["labels"];
  sections?: { startPoint: Point; endPoint: Point; bendPoints?: Point[] }[];
}

interface Point {
  x: number;
  y: number;
}

/** What lays the graph out: an `ELK` instance of elkjs (`new ELK()`), or anything with its `layout`. */
export interface LayoutEngine {
  layout(graph: LayoutNode): Promise<LayoutNode>;
}

/** A state's box, in absolute coordinates. */
export interface PlacedState {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A transition's route and its label's box, in absolute coordinates. */
export interface PlacedTransition {
  id: string;
  points: Point[];
  label?: { text: string; x: number; y: number; width: number; height: number };
}

/** The laid-out statechart. */
export interface Placed {
  width: number;
  height: number;
  states: Map<string, PlacedState>;
  transitions: PlacedTransition[];
}

const CHAR = 7.4; // px per character at the page's 13px font
const LINE = 18;

/** The label of a transition as drawn: guarded ones end with " [guard]". */
export function transitionLabel(event: string, guarded?: boolean): string {
  // xstate.after.<delay>.<state id>: the delay is what a reader needs.
  const after = /^xstate\.after\.([^.]+)\./.exec(event);
  const name = after ? `after ${after[1]}` : event.replace(/^xstate\.(done|error)\.actor\./, "$1: ");
  return guarded ? `${name} [guard]` : name;
}

/** The lines a state's box shows: its key, then what it invokes. */
export function stateLines(node: DevtoolsGraph["nodes"][number]): string[] {
  return [node.key, ...node.invokes.map((i) => `${i.kind === "machine" ? "child" : "invoke"} ${i.src}`)];
}

/** Lays out the statechart with `engine` (ELK's layered algorithm, hierarchy included). */
export async function layoutGraph(engine: LayoutEngine, graph: DevtoolsGraph): Promise<Placed> {
  const byParent = new Map<string | undefined, DevtoolsGraph["nodes"]>();
  for (const node of graph.nodes) {
    const list = byParent.get(node.parent) ?? [];
    list.push(node);
    byParent.set(node.parent, list);
  }
  const build = (node: DevtoolsGraph["nodes"][number]): LayoutNode => {
    const lines = stateLines(node);
    const kids = byParent.get(node.id) ?? [];
    const labelWidth = Math.max(...lines.map((l) => l.length)) * CHAR + 28;
    if (kids.length === 0) return { id: node.id, width: Math.max(90, labelWidth), height: lines.length * LINE + 16 };
    return {
      id: node.id,
      children: kids.map(build),
      layoutOptions: {
        "elk.padding": `[top=${lines.length * LINE + 14},left=14,bottom=14,right=14]`,
        "elk.nodeSize.constraints": "MINIMUM_SIZE",
        "elk.nodeSize.minimum": `(${labelWidth}, ${lines.length * LINE + 30})`,
        ...(node.type === "parallel" ? { "elk.direction": "RIGHT" } : {}),
      },
    };
  };
  const roots = byParent.get(undefined) ?? [];
  const root: LayoutNode = {
    id: "loom-devtools-root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "DOWN",
      "elk.hierarchyHandling": "INCLUDE_CHILDREN",
      "elk.edgeRouting": "ORTHOGONAL",
      "elk.layered.spacing.nodeNodeBetweenLayers": "40",
      "elk.spacing.nodeNode": "28",
      "elk.spacing.edgeLabel": "4",
      "elk.edgeLabels.inline": "false",
      "elk.json.edgeCoords": "ROOT",
      "elk.json.shapeCoords": "ROOT",
    },
    children: roots.map(build),
    edges: graph.transitions.map((t) => {
      const text = transitionLabel(t.event, t.guarded);
      return {
        id: t.id,
        sources: [t.source],
        targets: [t.target],
        labels: [{ text, width: text.length * CHAR + 8, height: LINE }],
      };
    }),
  };
  const out = await engine.layout(root);
  const states = new Map<string, PlacedState>();
  const visit = (n: LayoutNode) => {
    if (n.id !== root.id)
      states.set(n.id, { id: n.id, x: n.x ?? 0, y: n.y ?? 0, width: n.width ?? 0, height: n.height ?? 0 });
    for (const child of n.children ?? []) visit(child);
  };
  visit(out);
  const transitions: PlacedTransition[] = [];
  const edges = (n: LayoutNode): void => {
    for (const e of n.edges ?? []) {
      const section = e.sections?.[0];
      if (!section) continue;
      const label = e.labels?.[0];
      transitions.push({
        id: e.id,
        points: [section.startPoint, ...(section.bendPoints ?? []), section.endPoint],
        ...(label?.text !== undefined
          ? {
              label: {
                text: label.text,
                x: label.x ?? 0,
                y: label.y ?? 0,
                width: label.width ?? 0,
                height: label.height ?? 0,
              },
            }
          : {}),
      });
    }
    for (const child of n.children ?? []) edges(child);
  };
  edges(out);
  return { width: out.width ?? 0, height: out.height ?? 0, states, transitions };
}
