// The actor-system half of the browser harness page (ADR 0012): a parent machine and its child execution (messages
// both ways, the child's effect counted in localStorage and holdable) run in the tab on indexedDbStores, so a test can
// reload the tab mid-tree and resume the tree from IndexedDB.
import { createApp, createToolEffect, defineConfig, type App } from "../../../index.js";
import type { IndexedDbStores } from "../../../adapters/indexeddb/index.js";
import { parent } from "../../children/machines.js";

type Settle = <T>(work: () => Promise<T>) => Promise<unknown>;

const callsKey = (db: string) => `loomwork-tree-calls:${db}`;

/** `window.loom.tree`: drives a tree of executions on IndexedDB from page.evaluate. */
export function createTreeDriver(storesOf: (db: string) => Promise<IndexedDbStores>, settle: Settle) {
  const apps = new Map<string, App>();
  let hold = false;
  let holding = false;

  async function appFor(db: string): Promise<App> {
    let app = apps.get(db);
    if (!app) {
      const stores = await storesOf(db);
      const double = createToolEffect(async (n: number) => {
        localStorage.setItem(callsKey(db), String(Number(localStorage.getItem(callsKey(db)) ?? "0") + 1));
        if (hold) {
          holding = true;
          await new Promise<never>(() => undefined); // held until the tab goes away
        }
        return n * 2;
      });
      app = createApp(defineConfig({ stores, effects: { double }, logics: [parent] }));
      apps.set(db, app);
    }
    return app;
  }

  return {
    /** Holds the child's effect open (the tab is then reloaded with the call in flight). */
    hold(): void {
      hold = true;
    },
    holding(): boolean {
      return holding;
    },
    start(db: string) {
      return settle(async () => void (await (await appFor(db)).start(parent, { executionId: "tree" })));
    },
    /** resumeUnfinished in this page's app: the ids it resumed. */
    resumeAll(db: string) {
      return settle(async () => (await (await appFor(db)).resumeUnfinished()).resumed.map((a) => a.executionId));
    },
    result(db: string) {
      return settle(async () => (await appFor(db)).result("tree"));
    },
    /** Every log of the database, by execution id. */
    logs(db: string) {
      return settle(async () => {
        const stores = await storesOf(db);
        const ids = (await stores.events.listExecutions()).map((e) => e.executionId).sort();
        return Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await stores.events.read(id)])));
      });
    },
    calls(db: string): number {
      return Number(localStorage.getItem(callsKey(db)) ?? "0");
    },
  };
}
