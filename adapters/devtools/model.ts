// The devtools model, built from an execution's journal and its machine's definition: no DOM, no I/O. The
// statechart (nested and parallel states, transitions and their events, what each state invokes), the
// timeline of records, the state after each macrostep, the pending approvals and the tree of executions.
import { createMachine, type AnyStateMachine } from "xstate";
import { pendingAfter, type PendingApproval } from "../../actors/agents/approvals.js";
import { CHILD_EFFECT_ID } from "../../actors/journal/children.js";
import { inferDefinition, stateValueOf } from "../../actors/journal/inferredDefinition.js";
import {
  EVENT_RECEIVED,
  EXECUTION_ENDED,
  EXECUTION_STARTED,
  isJournalRecord,
  isMacrostepInputType,
  STEP_COMPLETED,
  STEP_FAILED,
  TIMER_SET,
  TRANSITION,
} from "../../stores/schema.js";
import type { ExecutionInfo, StoredRecord } from "../../stores/types.js";
import type {
  DevtoolsEntry,
  DevtoolsExecution,
  DevtoolsGraph,
  DevtoolsModel,
  DevtoolsState,
  DevtoolsStateNode,
  DevtoolsTransition,
} from "./view.js";

type AnyNode = AnyStateMachine["root"];

/** The machine's own snapshot after a macrostep, as a replay reports it (value, context, status). */
export interface ReplayedState {
  value: unknown;
  context: unknown;
  status: string;
}

/** What `buildModel` reads. */
export interface ModelInput {
  executionId: string;
  /** Every record of the execution in the read form (archived ones first), from seq 1. */
  records: StoredRecord[];
  /** The machine that wrote the journal; without it the statechart is inferred from the TRANSITION records. */
  logic?: AnyStateMachine;
  /** The machine's snapshot after each macrostep, from a replay with nothing run (`replayStates`). */
  replayed?: ReplayedState[];
  /** The effect ids that are model calls (their replies may park tool calls for approval). @defaultValue every effect */
  isModel?: (effectId: string) => boolean;
}

/** The statechart of a machine: every state node by its path, every transition with its event. */
export function graphOfMachine(machine: AnyStateMachine, from: DevtoolsGraph["from"] = "logic"): DevtoolsGraph {
  const machineId = machine.root.key;
  const idOf = (node: AnyNode) => [machineId, ...node.path].join(".");
  const actors: Record<string, unknown> = machine.implementations?.actors ?? {};
  const nodes: DevtoolsStateNode[] = [];
  const transitions: DevtoolsTransition[] = [];
  const walk = (node: AnyNode, parent?: AnyNode) => {
    const id = idOf(node);
    const initialTargets = parent?.type === "compound" ? parent.initial.target : [];
    nodes.push({
      id,
      key: node.key,
      type: node.type,
      ...(parent ? { parent: idOf(parent) } : {}),
      ...(initialTargets.includes(node) ? { initial: true } : {}),
      invokes: node.invoke.map((invoke) => {
        // A source named by string is looked up in the machine's `setup({ actors })`.
        const named: unknown = typeof invoke.src === "string" ? actors[invoke.src] : undefined;
        const src: unknown = invoke.src;
        const machineSrc =
          typeof named === "object" && named !== null && "root" in named
            ? (named as AnyStateMachine)
            : typeof src === "object" && src !== null && "root" in src
              ? (src as AnyStateMachine)
              : undefined;
        return {
          id: invoke.id,
          src: typeof src === "string" ? src : (machineSrc?.id ?? invoke.id),
          kind: machineSrc || src === CHILD_EFFECT_ID ? ("machine" as const) : ("effect" as const),
        };
      }),
    });
    const add = (event: string, defs: readonly { target?: readonly AnyNode[] | undefined; guard?: unknown }[]) => {
      for (const def of defs)
        for (const target of def.target ?? [])
          transitions.push({
            id: `${id}:${event}:${transitions.length}`,
            source: id,
            target: idOf(target),
            event,
            ...(def.guard ? { guarded: true } : {}),
          });
    };
    for (const [event, defs] of node.transitions) add(event, defs);
    if (node.always) add("always", node.always);
    for (const child of Object.values(node.states)) walk(child, node);
  };
  walk(machine.root);
  return { machineId, nodes, transitions, from };
}

/** A machine drawn from the journal alone: the states the TRANSITION records visited and the events between them. */
export function inferredMachine(logicId: string, records: StoredRecord[]): AnyStateMachine {
  const { description: _description, ...definition } = inferDefinition(logicId, records);
  return createMachine(definition);
}

const short = (value: unknown, max = 160): string | undefined => {
  if (value === undefined) return undefined;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text === undefined) return undefined;
  if (text.length <= max) return text;
  // Cut at a word boundary, never mid-word.
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
};

const KIND_OF_SEALED: Record<string, DevtoolsEntry["kind"]> = {
  [EXECUTION_STARTED]: "start",
  [EVENT_RECEIVED]: "event",
  [STEP_COMPLETED]: "step",
  [STEP_FAILED]: "step",
  [TIMER_SET]: "timer",
  [TRANSITION]: "transition",
  [EXECUTION_ENDED]: "end",
};

/** The journal as a timeline: one entry per record, each with the macrostep it belongs to. */
export function timelineOf(records: StoredRecord[]): DevtoolsEntry[] {
  const entries: DevtoolsEntry[] = [];
  let macrostep = -1;
  for (const r of records) {
    if (isMacrostepInputType(r.type)) macrostep++;
    const base = { seq: r.seq, at: r.at, macrostep: Math.max(0, macrostep) };
    // A sealed record (security.crypto) keeps its type readable, nothing else: the devtools hold no keys.
    if (typeof r.sealed === "string") {
      entries.push({ ...base, kind: KIND_OF_SEALED[r.type] ?? "control", label: `${r.type} (sealed)` });
      continue;
    }
    const event = r.event as { type?: string } | undefined;
    switch (r.type) {
      case EXECUTION_STARTED:
        entries.push({ ...base, kind: "start", label: `started ${String(r.logicId)}`, detail: short(r.input) });
        break;
      case EVENT_RECEIVED:
        entries.push({
          ...base,
          kind: r.timerId ? "timer-fired" : r.from ? "message" : "event",
          label: String(event?.type),
          detail: short(event),
        });
        break;
      case STEP_COMPLETED:
      case STEP_FAILED:
        entries.push({
          ...base,
          kind: "step",
          label: String(r.effectId),
          stepId: String(r.stepId),
          outcome: r.type === STEP_COMPLETED ? "completed" : "failed",
          detail: short(r.type === STEP_COMPLETED ? r.output : r.error),
        });
        break;
      case TIMER_SET:
        entries.push({
          ...base,
          kind: "timer",
          label: `timer ${String(event?.type)}`,
          detail: `due ${new Date(Number(r.dueAt)).toISOString()}`,
        });
        break;
      case TRANSITION:
        entries.push({ ...base, kind: "transition", label: `→ ${String(r.to)}`, detail: String(r.event ?? "") });
        break;
      case EXECUTION_ENDED:
        entries.push({
          ...base,
          kind: "end",
          label: `ended ${String(r.status)}`,
          detail: short(r.status === "error" ? r.error : r.output),
        });
        break;
      default:
        entries.push({ ...base, kind: "control", label: r.type });
    }
  }
  return entries;
}

/** The state after each macrostep: from the replayed snapshots when given, else the TRANSITION records' values. */
export function statesOf(records: StoredRecord[], replayed?: ReplayedState[]): DevtoolsState[] {
  const states: DevtoolsState[] = [];
  let value: unknown = null;
  let status = "active";
  for (const r of records) {
    if (isMacrostepInputType(r.type)) states.push({ fromSeq: r.seq, toSeq: r.seq, value, status });
    const current = states.at(-1);
    if (!current) continue;
    current.toSeq = r.seq;
    if (r.type === TRANSITION) current.value = value = stateValueOf(r.to);
    if (r.type === EXECUTION_ENDED) current.status = status = String(r.status);
  }
  // A replay reports one snapshot per macrostep: the machine's own value and context.
  if (replayed && replayed.length === states.length)
    states.forEach((state, k) => {
      state.value = replayed[k]!.value;
      state.context = replayed[k]!.context;
      if (state.status === "active") state.status = replayed[k]!.status;
    });
  return states;
}

/** The tool calls still parked at the end of the records. */
export function pendingOf(records: StoredRecord[], isModel: (effectId: string) => boolean = () => true) {
  let pending: PendingApproval[] = [];
  for (const record of records)
    if (isJournalRecord(record))
      pending = pendingAfter(pending, record, record.type !== STEP_COMPLETED || isModel(record.effectId));
  return pending.map(({ toolCallId, toolName, input, stepId }) => ({ toolCallId, toolName, input, stepId }));
}

/** The steps started and not recorded at the end of the records: what a resume would run. */
function inFlight(records: StoredRecord[], replayedStatus: string | undefined, stepsStarted: string[]): string[] {
  if (replayedStatus !== undefined && replayedStatus !== "active") return [];
  const recorded = new Set(
    records.filter((r) => r.type === STEP_COMPLETED || r.type === STEP_FAILED).map((r) => String(r.stepId)),
  );
  return stepsStarted.filter((id) => !recorded.has(id));
}

/**
 * The model of one execution. `replayed` (from `replayStates`) gives each state its context; without it the
 * states are the TRANSITION records' values. `stepsInFlight` are the step ids the replay left running.
 */
export function buildModel(input: ModelInput & { stepsInFlight?: string[]; note?: string }): DevtoolsModel {
  const { records, executionId } = input;
  const start = records.find((r) => r.type === EXECUTION_STARTED);
  const logicId = String(start?.logicId ?? input.logic?.id ?? executionId);
  const graph = input.logic
    ? graphOfMachine(input.logic, "logic")
    : graphOfMachine(inferredMachine(logicId, records), "journal");
  const states = statesOf(records, input.replayed);
  const last = states.at(-1);
  return {
    executionId,
    logicId,
    status: last?.status === "active" ? "running" : (last?.status ?? "running"),
    head: records.at(-1)?.seq ?? 0,
    graph,
    timeline: timelineOf(records),
    states,
    pending: pendingOf(records, input.isModel),
    replay: {
      stepsServedFromLog: records.filter((r) => r.type === STEP_COMPLETED || r.type === STEP_FAILED).length,
      stepsInFlight: inFlight(records, last?.status, input.stepsInFlight ?? []),
    },
    ...(input.note ? { note: input.note } : {}),
  };
}

/** The tree of executions: each execution under the parent its start record names. */
export function treeOf(
  executions: (Pick<ExecutionInfo, "executionId" | "logicId" | "status" | "head"> & {
    parent?: string;
    childId?: string;
  })[],
): DevtoolsExecution[] {
  const byId = new Map<string, DevtoolsExecution>();
  for (const e of executions)
    byId.set(e.executionId, {
      executionId: e.executionId,
      status: e.status,
      head: e.head,
      ...(e.logicId ? { logicId: e.logicId } : {}),
      ...(e.parent ? { parent: e.parent } : {}),
      ...(e.childId ? { childId: e.childId } : {}),
      children: [],
    });
  const roots: DevtoolsExecution[] = [];
  for (const node of byId.values()) {
    const parent = node.parent ? byId.get(node.parent) : undefined;
    (parent ? parent.children : roots).push(node);
  }
  return roots;
}

/** The parent link of a start record (`parent.executionId`, `parent.childId`), if it is a child execution's. */
export function parentOf(start: StoredRecord | undefined): { parent?: string; childId?: string } {
  const parent = start?.parent as { executionId?: unknown; childId?: unknown } | undefined;
  return typeof parent?.executionId === "string"
    ? { parent: parent.executionId, ...(typeof parent.childId === "string" ? { childId: parent.childId } : {}) }
    : {};
}
