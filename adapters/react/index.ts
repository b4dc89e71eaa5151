// loomwork/react: React hooks over a journaled actor and over the app's read models, on
// useSyncExternalStore. React is a peer dependency of this entry point only.
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from "react";
import type { AnyStateMachine, SnapshotFrom } from "xstate";
import type { JournaledActor } from "../../actors/journal/actor.js";
import type { App } from "../../actors/app.js";
import { RUNTIME_ERROR_CODES } from "../../actors/constants.js";
import { approvalsInTree, type TreePendingApproval } from "../../actors/agents/approvals.js";
import type { ExecutionStream, StreamOptions } from "../../actors/agents/streams.js";
import type { StreamPart } from "../../actors/agents/deltas.js";
import type { ExecutionView, ReadModels } from "../../actors/journal/readModels.js";
import { byExecutionId, treeUnder } from "../../actors/journal/executionsQuery.js";

/** What the hooks read of an actor: a `JournaledActor`, or anything with its `getSnapshot` and `subscribe`. */
export interface SnapshotSource<TSnapshot> {
  getSnapshot(): TSnapshot;
  subscribe(listener: (snapshot: TSnapshot) => void): { unsubscribe(): void };
}

/** The snapshot type of a journaled actor of `TLogic` (`typeof machine`). */
export type ExecutionSnapshot<TLogic extends AnyStateMachine> = SnapshotFrom<TLogic>;

/**
 * The actor's current snapshot; the component renders again when it changes. Typed by the actor's logic:
 * `useExecution(actor)` with `actor: JournaledActor<typeof machine>` gives the machine's context.
 *
 * @example
 * const snapshot = useExecution(actor);
 * return <p>{snapshot.status}: {snapshot.context.turn}</p>;
 */
export function useExecution<TLogic extends AnyStateMachine>(actor: JournaledActor<TLogic>): SnapshotFrom<TLogic>;
export function useExecution<TSnapshot>(actor: SnapshotSource<TSnapshot>): TSnapshot;
export function useExecution<TSnapshot>(actor: SnapshotSource<TSnapshot>): TSnapshot {
  const subscribe = useCallback((onChange: () => void) => subscribeTo(actor, onChange), [actor]);
  return useSyncExternalStore(
    subscribe,
    () => actor.getSnapshot(),
    () => actor.getSnapshot(),
  );
}

/**
 * A value derived from the actor's snapshot; the component renders again only when `compare` (default
 * `Object.is`) says the value changed, as `@xstate/react`'s `useSelector`.
 *
 * @example
 * const turn = useExecutionSelector(actor, (s) => s.context.turn);
 */
export function useExecutionSelector<TLogic extends AnyStateMachine, T>(
  actor: JournaledActor<TLogic>,
  selector: (snapshot: SnapshotFrom<TLogic>) => T,
  compare?: (a: T, b: T) => boolean,
): T;
export function useExecutionSelector<TSnapshot, T>(
  actor: SnapshotSource<TSnapshot>,
  selector: (snapshot: TSnapshot) => T,
  compare?: (a: T, b: T) => boolean,
): T;
export function useExecutionSelector<TSnapshot, T>(
  actor: SnapshotSource<TSnapshot>,
  selector: (snapshot: TSnapshot) => T,
  compare: (a: T, b: T) => boolean = Object.is,
): T {
  const subscribe = useCallback((onChange: () => void) => subscribeTo(actor, onChange), [actor]);
  const select = useSelection(selector, compare);
  const read = () => select(actor.getSnapshot());
  return useSyncExternalStore(subscribe, read, read);
}

/**
 * The app's executions from its read models (`createReadModels(app)`, loomwork/read-models): id, logic,
 * status, step and usage counters, ordered by id; the component renders again when any of them changes.
 * The list is the same array until then.
 *
 * @example
 * const models = createReadModels(app); // once, beside the app
 * const executions = useExecutions(models);
 * const running = executions.filter((e) => e.status === "running");
 */
export function useExecutions(models: ReadModels): ExecutionView[] {
  const store = models.executions;
  const subscribe = useCallback((onChange: () => void) => subscribeTo(store, onChange), [store]);
  const select = useSelection(
    (snapshot: ReturnType<typeof store.getSnapshot>) => sortedViews(snapshot.context.executions),
    sameViews,
  );
  const read = () => select(store.getSnapshot());
  return useSyncExternalStore(subscribe, read, read);
}

/**
 * The tree under an execution from the read models (docs/actors.md): its view and its child executions' at any
 * depth, ordered by id (a parent before its children; `parentId` links them), re-rendered as any of them moves.
 *
 * @example
 * const tree = useExecutionTree(models, "order-7");
 * // [{ executionId: "order-7", ... }, { executionId: "order-7/picker", parentId: "order-7", ... }]
 */
export function useExecutionTree(models: ReadModels, executionId: string): ExecutionView[] {
  const store = models.executions;
  const subscribe = useCallback((onChange: () => void) => subscribeTo(store, onChange), [store]);
  const select = useSelection(
    (snapshot: ReturnType<typeof store.getSnapshot>) =>
      treeUnder(Object.values(snapshot.context.executions), executionId).sort(byExecutionId),
    sameViews,
  );
  const read = () => select(store.getSnapshot());
  return useSyncExternalStore(subscribe, read, read);
}

/** One execution's view from the read models, or undefined until the app knows it. */
export function useExecutionView(models: ReadModels, executionId: string): ExecutionView | undefined {
  const store = models.executions;
  const subscribe = useCallback((onChange: () => void) => subscribeTo(store, onChange), [store]);
  const read = () => store.getSnapshot().context.executions[executionId];
  return useSyncExternalStore(subscribe, read, read);
}

const textDelta = (part: StreamPart): string =>
  part.type === "text-delta" && typeof part.delta === "string" ? part.delta : "";

/** The text of `parts`: every text delta but those of an attempt a later `retry` of its step voided. */
function textOf(parts: readonly StreamPart[]): string {
  const kept: { stepId: string; text: string; attempt: number }[] = [];
  const attempts = new Map<string, number>();
  for (const part of parts) {
    const attempt = attempts.get(part.stepId) ?? 0;
    if (part.type === "start-step") attempts.set(part.stepId, attempt + 1);
    else if (part.type === "retry") {
      for (let i = kept.length - 1; i >= 0; i--)
        if (kept[i]!.stepId === part.stepId && kept[i]!.attempt === attempt) kept.splice(i, 1);
      attempts.set(part.stepId, attempt + 1);
    } else if (textDelta(part)) kept.push({ stepId: part.stepId, text: textDelta(part), attempt });
  }
  return kept.map((k) => k.text).join("");
}

/**
 * The execution's stream (`app.stream`): its recorded turns from the journal, then the model's deltas
 * live, as parts with their index; `text` is the text of the parts so far (a `retry` part voids the text its step's
 * failed attempt streamed). A remount or a reload starts
 * again from the journal, so nothing streamed is lost to the UI. Mounted for an id not started yet (a chat
 * whose first message starts it), it follows the execution from its first journaled record when `app`
 * has `on` (an `App` does); else it shows nothing.
 *
 * @example
 * const { text, parts } = useExecutionStream(app, "chat-1");
 */
export function useExecutionStream(
  app: { stream(executionId: string, options?: StreamOptions): ExecutionStream; on?: App["on"] },
  executionId: string,
): { parts: StreamPart[]; text: string } {
  const [state, setState] = useState<{ parts: StreamPart[]; text: string }>({ parts: [], text: "" });
  useEffect(() => {
    const abort = new AbortController();
    setState({ parts: [], text: "" });
    // app.stream of an id with no execution rejects on its first read: read again once its first record is journaled.
    let appeared = false;
    let waiting = false;
    const unbind = app.on?.("append", (event) => {
      if (event.executionId !== executionId) return;
      appeared = true;
      if (!waiting) return;
      waiting = false;
      follow();
    });
    function follow(): void {
      void (async () => {
        for await (const part of app.stream(executionId, { signal: abort.signal })) {
          if (abort.signal.aborted) return;
          setState((previous) => {
            const parts = [...previous.parts, part];
            // A retry voids its step's text since that step's last start-step (the attempt that failed).
            return { parts, text: part.type === "retry" ? textOf(parts) : previous.text + textDelta(part) };
          });
        }
      })().catch((error: unknown) => {
        if (
          abort.signal.aborted ||
          !unbind ||
          (error as { code?: unknown } | undefined)?.code !== RUNTIME_ERROR_CODES.unknownExecution
        )
          return;
        if (appeared) follow();
        else waiting = true;
      });
    }
    follow();
    return () => {
      abort.abort();
      unbind?.();
    };
  }, [app, executionId]);
  return state;
}

/**
 * The tool calls parked for a human (`needsApproval`), from the app's read models: of the tree under one
 * execution (itself and its sub-agents at any depth), or of all. Each names the execution that parked it and
 * its `path` (execution ids and agents) from the execution asked about, or from its root. Decide one with
 * `actor.send({ type: "TOOL_APPROVAL", toolCallId, approved, reason? })` on the root's actor: it reaches the
 * sub-agent that waits.
 */
export function usePendingApprovals(models: ReadModels, executionId?: string): TreePendingApproval[] {
  const executions = useExecutions(models);
  const memo = useRef<{ views: ExecutionView[]; id: string | undefined; value: TreePendingApproval[] } | undefined>(
    undefined,
  );
  if (memo.current?.views !== executions || memo.current.id !== executionId) {
    const views = executionId === undefined ? executions : treeUnder(executions, executionId).sort(byExecutionId);
    memo.current = { views: executions, id: executionId, value: approvalsInTree(views, executionId) };
  }
  return memo.current.value;
}

function subscribeTo<V>(
  source: { subscribe(listener: (value: V) => void): { unsubscribe(): void } },
  onChange: () => void,
): () => void {
  const subscription = source.subscribe(() => onChange());
  return () => subscription.unsubscribe();
}

// Memoizes a selection per input and keeps the previous result while `compare` calls it equal, so that
// useSyncExternalStore sees the same value until it changes.
function useSelection<I, T>(selector: (input: I) => T, compare: (a: T, b: T) => boolean): (input: I) => T {
  const memo = useRef<{ input: I; value: T } | undefined>(undefined);
  const latest = useRef({ selector, compare });
  latest.current = { selector, compare };
  return useCallback((input: I) => {
    const previous = memo.current;
    if (previous && previous.input === input) return previous.value;
    const next = latest.current.selector(input);
    const value = previous && latest.current.compare(previous.value, next) ? previous.value : next;
    memo.current = { input, value };
    return value;
  }, []);
}

function sortedViews(views: Record<string, ExecutionView>): ExecutionView[] {
  return Object.values(views).sort((a, b) =>
    a.executionId < b.executionId ? -1 : a.executionId > b.executionId ? 1 : 0,
  );
}

function sameViews(a: ExecutionView[], b: ExecutionView[]): boolean {
  return a.length === b.length && a.every((view, i) => view === b[i]);
}
