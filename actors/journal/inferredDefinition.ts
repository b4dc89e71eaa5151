// A machine's definition inferred from a recorded journal's TRANSITION records (the states visited and the events that
// moved between them): what `loomwork inspect` and the devtools draw when they do not hold the machine itself.
import { EXECUTION_ENDED, TRANSITION } from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import { isObject } from "../../stores/shapes.js";

interface StateNode {
  initial?: string;
  type?: "final";
  states?: Record<string, StateNode>;
  on?: Record<string, { target: string }[]>;
}

/** "a" -> "a"; "a.b" -> { a: "b" }; "a.b,c.d" (parallel regions) -> { a: "b", c: "d" }. */
export function stateValueOf(text: unknown): unknown {
  if (typeof text !== "string") return null;
  const paths = text.split(",");
  if (paths.length === 1 && !text.includes(".")) return text;
  const value: Record<string, unknown> = {};
  for (const path of paths) {
    const parts = path.split(".");
    let node = value;
    for (let i = 0; i < parts.length - 2; i++) {
      const next = node[parts[i]!];
      const child = isObject(next) ? next : (node[parts[i]!] = {});
      node = child;
    }
    if (parts.length === 1) node[parts[0]!] = {};
    else node[parts.at(-2)!] = parts.at(-1);
  }
  return value;
}

// Done/error events of spawned children carry their ids (tool:3:0): one edge per kind, not per turn.
const edgeName = (event: string) => (/^xstate\.(done|error)\.actor\./.test(event) ? event.replace(/\d+/g, "*") : event);

export function inferDefinition(logicId: string, records: StoredRecord[]): Record<string, unknown> {
  const root: StateNode = {};
  const ensure = (path: string): StateNode => {
    let node = root;
    for (const part of path.split(".")) {
      node.states ??= {};
      node.initial ??= part;
      node = node.states[part] ??= {};
    }
    return node;
  };
  let last: string | undefined;
  let previous: string | undefined;
  for (const r of records) {
    if (r.type !== TRANSITION || typeof r.to !== "string") continue;
    const to = r.to.split(",");
    to.forEach(ensure);
    last = to[0];
    // A record read without `from` (a read that started after the record it derives from): the previous `to`.
    const fromText = typeof r.from === "string" ? r.from : previous;
    previous = r.to;
    if (fromText === undefined) continue;
    const from = ensure(fromText.split(",")[0]!);
    // One event may lead to different states (guarded alternatives): one transition per target.
    const edges = ((from.on ??= {})[edgeName(String(r.event))] ??= []);
    const target = `#${logicId}.${to[0]}`;
    if (!edges.some((e) => e.target === target)) edges.push({ target });
  }
  const ended = records.findLast((r) => r.type === EXECUTION_ENDED);
  if (last && ended?.status === "done") {
    const node = ensure(last);
    if (!node.states) node.type = "final";
  }
  return {
    id: logicId,
    description:
      "Inferred from the journal's TRANSITION records (states visited, events between them). Pass --logic <module> for the machine's own definition.",
    ...root,
  };
}
