// The devtools model as the page reads it: plain JSON types and the few pure functions the page needs.
// Imports nothing, so the served page loads this file as it is, with no bundler and no package.

/** A state node of the statechart: `id` is the machine id and the node's path, joined by dots. */
export interface DevtoolsStateNode {
  id: string;
  /** The node's key in its parent (the machine id for the root). */
  key: string;
  /** The parent node's id; absent for the root. */
  parent?: string;
  type: "atomic" | "compound" | "parallel" | "final" | "history";
  /** The parent's initial state. */
  initial?: boolean;
  /** What the state invokes while it is active: effects (by source name) and child machines. */
  invokes: { id: string; src: string; kind: "effect" | "machine" }[];
}

/** A transition: from `source` to `target` on `event` (`always` for an eventless one). */
export interface DevtoolsTransition {
  id: string;
  source: string;
  target: string;
  event: string;
  /** The transition has a guard. */
  guarded?: boolean;
}

/** The statechart of an execution's machine. */
export interface DevtoolsGraph {
  machineId: string;
  nodes: DevtoolsStateNode[];
  transitions: DevtoolsTransition[];
  /** "logic": drawn from the machine's own definition; "journal": inferred from the TRANSITION records. */
  from: "logic" | "journal";
}

/** One record of the journal, as the timeline shows it. */
export interface DevtoolsEntry {
  seq: number;
  at: number;
  kind: "start" | "event" | "timer-fired" | "message" | "step" | "timer" | "transition" | "end" | "control";
  /** One line: the event's type, the step's effect, the transition's target. */
  label: string;
  /** A step's outcome. */
  outcome?: "completed" | "failed";
  /** A step's id. */
  stepId?: string;
  /** A short text of what the record carries (an event's fields, a step's output or error). */
  detail?: string;
  /** The index of the macrostep the record belongs to. */
  macrostep: number;
}

/** The state at the end of a macrostep: its value, and its context when the machine was replayed. */
export interface DevtoolsState {
  /** The macrostep's first and last seq. */
  fromSeq: number;
  toSeq: number;
  value: unknown;
  /** Absent when the state comes from the TRANSITION records only (no machine to replay). */
  context?: unknown;
  status: string;
}

/** A tool call that waits for a human. */
export interface DevtoolsApproval {
  toolCallId: string;
  toolName: string;
  input: unknown;
  stepId: string;
}

/** An execution in the tree of executions. */
export interface DevtoolsExecution {
  executionId: string;
  logicId?: string;
  status: string;
  head: number;
  /** The parent execution (a child execution's start record names it). */
  parent?: string;
  /** The child id the parent invoked or spawned it under. */
  childId?: string;
  children: DevtoolsExecution[];
}

/** Everything the page draws for one execution. JSON all through: the CLI sends it as it is. */
export interface DevtoolsModel {
  executionId: string;
  logicId: string;
  status: string;
  head: number;
  graph: DevtoolsGraph;
  timeline: DevtoolsEntry[];
  /** One per macrostep, in journal order. */
  states: DevtoolsState[];
  pending: DevtoolsApproval[];
  /** What a resume would do with this journal: the steps it serves from the log and those it would run (in flight). */
  replay: { stepsServedFromLog: number; stepsInFlight: string[] };
  /** Why the state carries no context, or the machine could not replay the journal. */
  note?: string;
}

/** The state at `seq`: the one after the macrostep that holds it (undefined before the first). */
export function stateAtSeq(model: Pick<DevtoolsModel, "states">, seq: number): DevtoolsState | undefined {
  let found: DevtoolsState | undefined;
  for (const state of model.states) {
    if (state.fromSeq > seq) break;
    found = state;
  }
  return found;
}

/** The ids of the state nodes a state value makes active (the root, and every node on the value's paths). */
export function activeNodeIds(machineId: string, value: unknown): Set<string> {
  const active = new Set<string>([machineId]);
  const walk = (prefix: string, v: unknown) => {
    if (typeof v === "string") active.add(`${prefix}.${v}`);
    else if (typeof v === "object" && v !== null)
      for (const [key, inner] of Object.entries(v)) {
        active.add(`${prefix}.${key}`);
        walk(`${prefix}.${key}`, inner);
      }
  };
  walk(machineId, value);
  return active;
}

/** A state value as one line: "a.b" or "a.b, c.d" for parallel regions. */
export function valueText(value: unknown): string {
  const paths: string[] = [];
  const walk = (prefix: string, v: unknown) => {
    if (typeof v === "string") paths.push(prefix ? `${prefix}.${v}` : v);
    else if (typeof v === "object" && v !== null && Object.keys(v).length > 0)
      for (const [key, inner] of Object.entries(v)) walk(prefix ? `${prefix}.${key}` : key, inner);
    else if (prefix) paths.push(prefix);
  };
  walk("", value);
  return paths.join(", ") || String(value);
}
