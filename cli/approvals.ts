// The calls parked for a human in a journal directory, read without the machines: per execution from its
// records, and across a tree of executions (a lead and its sub-agents) with each call's path from the root.
import {
  approvalsInTree,
  pendingAfter,
  type PendingApproval,
  type TreePendingApproval,
} from "../actors/agents/approvals.js";
import { byExecutionId, treeUnder } from "../actors/journal/executionsQuery.js";
import type { FsStores } from "../adapters/fs/index.js";
import type { ExecutionInfo } from "../index.js";
import { isJournalRecord } from "../stores/schema.js";
import { isSealed, readRecords } from "./journal.js";

/** What waits for a human: the calls with their paths, and the executions whose sealed records hide theirs. */
export interface WaitingCalls {
  calls: TreePendingApproval[];
  sealed: string[];
}

/**
 * The calls parked in the trees under `executionIds` (each execution and its running sub-agents at any depth),
 * paths from each of them; without ids, in every running execution, paths from each one's root.
 */
export async function waitingCalls(stores: FsStores, executionIds?: readonly string[]): Promise<WaitingCalls> {
  const infos = (await stores.events.listExecutions()).sort(byExecutionId);
  const running = (list: ExecutionInfo[]) => list.filter((info) => info.status === "running");
  const sealed: string[] = [];
  const read = async (list: ExecutionInfo[]) =>
    Promise.all(
      list.map(async (info) => {
        let pending: PendingApproval[] = [];
        for (const record of await readRecords(stores, info.executionId)) {
          if (isSealed(record)) {
            if (!sealed.includes(info.executionId)) sealed.push(info.executionId);
            pending = [];
            break;
          }
          // Only a model's reply parks calls (approvalsAsked finds none in a tool's output).
          if (isJournalRecord(record)) pending = pendingAfter(pending, record);
        }
        return { ...info, pendingApprovals: pending };
      }),
    );
  if (executionIds === undefined) return { calls: approvalsInTree(await read(running(infos))), sealed };
  const calls: TreePendingApproval[] = [];
  for (const executionId of executionIds) {
    const tree = treeUnder(infos, executionId).sort(byExecutionId);
    // The execution asked about is listed even if it ended (its calls are none then); its sub-agents while they run.
    const views = await read(tree.filter((info) => info.executionId === executionId || info.status === "running"));
    calls.push(...approvalsInTree(views, executionId));
  }
  return { calls, sealed };
}
