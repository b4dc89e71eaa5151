// Read models on @xstate/store, fed from the journal: the execution list with status, and per-execution
// step and usage counters, for UIs (`useSelector(createReadModels(app).executions, ...)`) and the CLI.
// Built from the event store's catalogue and each log at creation, then kept current from the bus.
import { createStore } from "@xstate/store";
import type { ChainLayer } from "../../machines/effectChain.js";
import { EXECUTION_ENDED, EXECUTION_STARTED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import { approvalsInTree, pendingAfter, type PendingApproval, type TreePendingApproval } from "../agents/approvals.js";
import type { EventStore, ExecutionInfo, ExecutionStatus, JournalRecord } from "../../stores/types.js";
import { processWarning, type RuntimeEvents, type Warning } from "../bus.js";
import type { LoomConfig } from "../config.js";
import { WARNING_CODES } from "../constants.js";
import { emptyUsage, foldUsage, type ExecutionUsage } from "../effects/capabilities.js";
import { isObject } from "../../stores/shapes.js";
import { byExecutionId, treeUnder } from "./executionsQuery.js";

/** One execution as the read model shows it. */
export interface ExecutionView {
  executionId: string;
  logicId?: string;
  subject?: string;
  status: ExecutionStatus;
  startedAt?: number;
  endedAt?: number;
  /** Seq of the last record seen. */
  head: number;
  steps: { completed: number; failed: number };
  usage: ExecutionUsage;
  /** Where the last failed step stopped in the effect chain. */
  lastStoppedAt?: ChainLayer;
  /** Tool calls parked until a human's TOOL_APPROVAL (`needsApproval`), oldest first. */
  pendingApprovals: PendingApproval[];
  /** A child execution's parent (docs/actors.md); absent for a root. */
  parentId?: string;
  /** A child execution's root; absent for a root. */
  rootId?: string;
}

export interface ExecutionsContext {
  executions: Record<string, ExecutionView>;
}

function blank(executionId: string): ExecutionView {
  return {
    executionId,
    status: "running",
    head: 0,
    steps: { completed: 0, failed: 0 },
    usage: emptyUsage(),
    pendingApprovals: [],
  };
}

function copy(view: ExecutionView): ExecutionView {
  return { ...view, steps: { ...view.steps }, usage: { ...view.usage }, pendingApprovals: [...view.pendingApprovals] };
}

/** Folds records into a view (in place). `counters` only: leave status to the records that come later. */
function fold(
  view: ExecutionView,
  records: JournalRecord[],
  isModel: (effectId: string) => boolean,
  countersOnly: boolean,
): void {
  for (const record of records) {
    view.pendingApprovals = pendingAfter(
      view.pendingApprovals,
      record,
      record.type === STEP_COMPLETED && isModel(record.effectId),
    );
    switch (record.type) {
      case EXECUTION_STARTED:
        view.logicId ??= record.logicId;
        if (typeof record.subject === "string") view.subject ??= record.subject;
        view.startedAt ??= record.at;
        if (isObject(record.parent) && typeof record.parent.executionId === "string")
          view.parentId ??= record.parent.executionId;
        if (typeof record.root === "string") view.rootId ??= record.root;
        break;
      case STEP_COMPLETED:
        view.steps.completed++;
        break;
      case STEP_FAILED:
        view.steps.failed++;
        if (typeof record.stoppedAt === "string") view.lastStoppedAt = record.stoppedAt as ChainLayer;
        break;
      case EXECUTION_ENDED:
        if (countersOnly) break;
        view.status = record.status;
        view.endedAt = record.at;
        break;
    }
    foldUsage(view.usage, record, isModel);
    if (!countersOnly) view.head = Math.max(view.head, record.seq);
  }
}

/** The executions store: an @xstate/store store over `{ executions: { [id]: ExecutionView } }`. */
export function createExecutionsStore(isModel: (effectId: string) => boolean) {
  const context: ExecutionsContext = { executions: {} };
  return createStore({
    context,
    on: {
      /** The catalogue (listExecutions): adds what is missing; a live entry that is ahead keeps its status. */
      listed: (context, event: { infos: ExecutionInfo[] }) => {
        const executions = { ...context.executions };
        for (const info of event.infos) {
          const view = copy(executions[info.executionId] ?? blank(info.executionId));
          if (info.logicId !== undefined) view.logicId ??= info.logicId;
          if (info.subject !== undefined) view.subject ??= info.subject;
          view.startedAt ??= info.startedAt;
          if (info.parentId !== undefined) view.parentId ??= info.parentId;
          if (info.rootId !== undefined) view.rootId ??= info.rootId;
          if (info.head > view.head) {
            view.status = info.status;
            view.head = info.head;
            if (info.endedAt !== undefined) view.endedAt = info.endedAt;
          }
          executions[info.executionId] = view;
        }
        return { executions };
      },
      /** Records appended before the store listened: counters only. */
      hydrated: (context, event: { executionId: string; records: JournalRecord[] }) => {
        const view = copy(context.executions[event.executionId] ?? blank(event.executionId));
        fold(view, event.records, isModel, true);
        return { executions: { ...context.executions, [event.executionId]: view } };
      },
      /** Executions whose views are dropped (their subject was erased). */
      forgotten: (context, event: { executionIds: string[] }) => {
        const executions = { ...context.executions };
        for (const executionId of event.executionIds) delete executions[executionId];
        return { executions };
      },
      /** Records the app appended (the bus's `append`). */
      appended: (context, event: { executionId: string; records: JournalRecord[] }) => {
        const view = copy(context.executions[event.executionId] ?? blank(event.executionId));
        fold(view, event.records, isModel, false);
        return { executions: { ...context.executions, [event.executionId]: view } };
      },
    },
  });
}

/** An @xstate/store of the execution list, fed from the journal. */
export type ExecutionsStore = ReturnType<typeof createExecutionsStore>;

/** The app's read models on @xstate/store: executions with status, steps and usage. */
export interface ReadModels {
  /** The execution list with status and counters (an @xstate/store store: subscribe, select, getSnapshot). */
  readonly executions: ExecutionsStore;
  /** Resolves once the catalogue and the counters of every execution that existed at creation are loaded. */
  readonly ready: Promise<void>;
  /** Every execution, ordered by id. */
  list(): ExecutionView[];
  execution(executionId: string): ExecutionView | undefined;
  /** The tree under an execution: its view and its child executions' at any depth, ordered by id (empty: unknown). */
  tree(executionId: string): ExecutionView[];
  /**
   * The tool calls parked in the tree under an execution (itself and its sub-agents at any depth), oldest
   * execution first: each with the execution that parked it and its `path` from `executionId` (ids and agents).
   * Decide one by sending `{ type: "TOOL_APPROVAL", toolCallId, approved }` to `executionId` (the root): it reaches
   * the execution that waits.
   */
  approvals(executionId: string): TreePendingApproval[];
  /** Drops the views of these executions (an erasure: the views are the subject's data too). */
  forget(executionIds: readonly string[]): void;
  /** Stops listening to the app. */
  dispose(): void;
}

/** What the read models follow: an app's journal, catalogue and bus (`createReadModels(app)`, actors/journal/appReadModels.ts, builds it from the app). */
export interface ReadModelsSource {
  readonly config: Pick<LoomConfig, "effects">;
  readonly stores: { readonly events: Pick<EventStore, "listExecutions"> };
  on(event: "append", listener: RuntimeEvents["append"]): () => void;
  /** Every record of the execution, archived ones first, opened. */
  log(executionId: string): Promise<JournalRecord[]>;
  /** Where a failed hydration is reported; without it, the process warning channel (`process.emitWarning`). */
  warn?(warning: Warning): void;
  /** Hears the executions the app dropped for an erased subject: their views go too. */
  onForget?(listener: (executionIds: readonly string[]) => void): () => void;
}

/** Read models over `app`'s journal, catalogue and bus (the public form is `createReadModels(app)`). */
export function readModelsOver(app: ReadModelsSource): ReadModels {
  const isModel = (effectId: string) => app.config.effects[effectId]?.kind === "llm";
  const executions = createExecutionsStore(isModel);
  // The first seq each execution's live appends carried: hydration folds only what came before it.
  const liveFrom = new Map<string, number>();
  const unbindAppend = app.on("append", ({ executionId, records }) => {
    if (!liveFrom.has(executionId) && records[0]) liveFrom.set(executionId, records[0].seq);
    executions.trigger.appended({ executionId, records });
  });
  // Executions forgotten while the first load runs: what it read of them may predate their erasure, so it is not applied.
  let loading = true;
  const forgotten = new Set<string>();
  const ready = (async () => {
    const infos = await app.stores.events.listExecutions();
    executions.trigger.listed({ infos: infos.filter((info) => !forgotten.has(info.executionId)) });
    await Promise.all(
      infos.map(async ({ executionId }) => {
        const records = await app.log(executionId).catch((): JournalRecord[] => []);
        if (forgotten.has(executionId)) return;
        const from = liveFrom.get(executionId) ?? Number.POSITIVE_INFINITY;
        executions.trigger.hydrated({ executionId, records: records.filter((r) => r.seq < from) });
      }),
    );
  })().finally(() => {
    loading = false;
    forgotten.clear();
  });
  ready.catch((error: unknown) => {
    const warning = {
      code: WARNING_CODES.readModelFailed,
      message: error instanceof Error ? error.message : String(error),
    };
    if (app.warn) app.warn(warning);
    else processWarning(warning.message, warning.code);
  });
  const forget = (executionIds: readonly string[]) => {
    for (const executionId of executionIds) {
      liveFrom.delete(executionId);
      if (loading) forgotten.add(executionId);
    }
    executions.trigger.forgotten({ executionIds: [...executionIds] });
  };
  const unbindForget = app.onForget?.(forget);
  return {
    executions,
    ready,
    list: () => Object.values(executions.getSnapshot().context.executions).sort(byExecutionId),
    execution: (executionId) => executions.getSnapshot().context.executions[executionId],
    tree: (executionId) =>
      treeUnder(Object.values(executions.getSnapshot().context.executions), executionId).sort(byExecutionId),
    approvals: (executionId) =>
      approvalsInTree(
        treeUnder(Object.values(executions.getSnapshot().context.executions), executionId).sort(byExecutionId),
        executionId,
      ),
    forget,
    dispose: () => {
      unbindAppend();
      unbindForget?.();
    },
  };
}
