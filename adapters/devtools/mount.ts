// The devtools page over an app's own stores, in the app's page: an offline tab shows its own machines. The
// stores are only read; a decision on an approval goes to the app that runs the execution.
import ELK from "elkjs/lib/elk.bundled.js";
import type { AnyStateMachine } from "xstate";
import type { App } from "../../actors/app.js";
import { TOOL_APPROVAL_EVENT } from "../../actors/agents/approvals.js";
import type { EventStore } from "../../stores/types.js";
import { loadModel, loadTree } from "./load.js";
import { renderDevtools, type DevtoolsPage, type DevtoolsSource } from "./page.js";

/** Options of `mountDevtools`. */
export interface MountDevtoolsOptions {
  /** The app's stores (`indexedDbStores(...)`, `memoryStores()`): only `events` is read. */
  stores: { events: EventStore };
  /** The machines the app runs: each execution's own draws its statechart and is replayed for its context. @defaultValue none: inferred from the journal */
  logics?: readonly AnyStateMachine[];
  /** The app that runs the executions: with it the page shows Approve / Deny buttons, which send the decision through `app.resume(id)`'s actor. */
  app?: App;
  /** How often the page re-reads the stores, in ms; 0 to read once. @defaultValue 1000 */
  pollMs?: number;
  /** The execution shown first. @defaultValue the first running one */
  executionId?: string;
  /** The page's heading. @defaultValue "loomwork devtools" */
  title?: string;
}

/** A `DevtoolsSource` over an event store (and the app that runs its executions, for decisions). */
export function storesSource(options: Pick<MountDevtoolsOptions, "stores" | "logics" | "app">): DevtoolsSource {
  const { stores, logics, app } = options;
  return {
    tree: () => loadTree(stores.events),
    model: (executionId) => loadModel(stores.events, executionId, logics ? { logics } : {}),
    ...(app
      ? {
          decide: async (executionId: string, toolCallId: string, approved: boolean, reason?: string) => {
            const actor = await app.resume(executionId);
            await actor.sendAsync({
              type: TOOL_APPROVAL_EVENT,
              toolCallId,
              approved,
              ...(reason === undefined ? {} : { reason }),
            });
          },
        }
      : {}),
  };
}

/**
 * Mounts the devtools page into `element` over the app's own stores: the statechart of each execution, its
 * current state live, the journal as a timeline with time travel by seq, the tree of executions and the pending
 * approvals. Needs no network: the layout engine (elkjs) is bundled with the page. `close()` unmounts it.
 *
 * @example
 * import { mountDevtools } from "loomwork/devtools";
 * const devtools = mountDevtools(document.getElementById("devtools")!, { stores, logics: [assistant], app });
 */
export function mountDevtools(element: HTMLElement, options: MountDevtoolsOptions): DevtoolsPage {
  return renderDevtools(element, storesSource(options), {
    // elkjs is CommonJS: its default import is module.exports, whose `default` is the constructor again.
    elk: new ELK.default(),
    ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
    ...(options.executionId === undefined ? {} : { executionId: options.executionId }),
    ...(options.title === undefined ? {} : { title: options.title }),
  });
}
