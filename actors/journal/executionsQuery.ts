// app.executions(query): the catalogue's entries an app lists, by tree, subject and status. A tree is read off the
// catalogue's parent links (ExecutionInfo.parentId, folded from each child's EXECUTION_STARTED): the execution the
// query names and every execution below it, at any depth.
import type { EventStore, ExecutionInfo, ExecutionStatus } from "../../stores/types.js";
import { ConfigError } from "../errors.js";

/** What `app.executions` selects; every field narrows the list (absent: no filter). */
export interface ExecutionsQuery {
  /** The tree under this execution: it (when the catalogue has it) and its child executions, at any depth. */
  root?: string;
  /** Only the executions of this data subject (a child execution inherits its parent's). */
  subject?: string;
  /** Only the executions in this status. */
  status?: ExecutionStatus;
}

const QUERY_KEYS = new Set(["root", "subject", "status"]);
const STATUSES = new Set<string>(["running", "done", "error", "stopped"]);

/** Refuses a query that is not one (ConfigError naming the field), before anything is read. */
export function checkExecutionsQuery(query: unknown): asserts query is ExecutionsQuery {
  if (typeof query !== "object" || query === null || Array.isArray(query))
    throw new ConfigError("executions.query", `expected an object such as { root: "p1" }, got ${String(query)}.`);
  for (const [key, value] of Object.entries(query)) {
    if (!QUERY_KEYS.has(key))
      throw new ConfigError(`executions.${key}`, `unknown option. Known options: ${[...QUERY_KEYS].join(", ")}.`);
    if (value === undefined) continue;
    if (key === "status" ? !STATUSES.has(String(value)) : typeof value !== "string" || value === "")
      throw new ConfigError(
        `executions.${key}`,
        key === "status"
          ? `expected one of ${[...STATUSES].join(", ")}, got ${JSON.stringify(value)}.`
          : `expected a non-empty string, got ${JSON.stringify(value)}.`,
      );
  }
}

/** The entries `query` may select, read from `events`: a tree by the store's tree index when it has one. */
export function candidates(events: EventStore, query: ExecutionsQuery): Promise<ExecutionInfo[]> {
  return query.root !== undefined && events.listTree ? events.listTree(query.root) : events.listExecutions();
}

/** The entries `query` selects, ordered by execution id (a parent before its children). */
export function selectExecutions(all: readonly ExecutionInfo[], query: ExecutionsQuery): ExecutionInfo[] {
  return (query.root === undefined ? [...all] : treeUnder(all, query.root))
    .filter((info) => query.subject === undefined || info.subject === query.subject)
    .filter((info) => query.status === undefined || info.status === query.status)
    .sort(byExecutionId);
}

/** The execution `root` (when listed) and every execution below it by parent links, at any depth, in no set order. */
export function treeUnder<T extends { executionId: string; parentId?: string }>(all: Iterable<T>, root: string): T[] {
  const children = new Map<string, T[]>();
  const tree: T[] = [];
  for (const entry of all) {
    if (entry.executionId === root) tree.push(entry);
    if (entry.parentId === undefined) continue;
    const siblings = children.get(entry.parentId);
    if (siblings) siblings.push(entry);
    else children.set(entry.parentId, [entry]);
  }
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!.executionId) ?? []));
  return tree;
}

/** Orders by execution id, code unit by code unit (a parent's id is a prefix of its children's). */
export function byExecutionId(a: { executionId: string }, b: { executionId: string }): number {
  return a.executionId < b.executionId ? -1 : a.executionId > b.executionId ? 1 : 0;
}
