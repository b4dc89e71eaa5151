// The page the browser specs drive. It exposes `window.loom`: the public entry points plus a few
// helpers whose results cross page.evaluate() as plain JSON. Extend it here (e.g. with the runtime
// and an agent) rather than building another page; `loom.ready` flips once the module has loaded.
import {
  SCHEMA_VERSION,
  acquireWriter,
  indexedDbStores,
  watchExecutions,
  type IndexedDbStores,
  type WriterLease,
} from "../../../adapters/indexeddb/index.js";
import { createApp, defineConfig, memoryStores } from "../../../index.js";
import { fromUtf8, utf8 } from "../../../stores/bytes.js";
import { createAgentDriver } from "./agent.js";
import { createTreeDriver } from "./tree.js";
import { createAgentTreeDriver } from "./agentTree.js";
import { createRealModelDriver } from "./realModel.js";
import { createOfflineDriver } from "./offline.js";
import * as schema from "../../../stores/schema.js";
import type { ExecutionInfo } from "../../../stores/types.js";

/** An outcome that survives serialisation: errors become their name, code, reason and message. */
export type Outcome<T> =
  { ok: true; value: T } | { ok: false; error: { name: string; code?: string; reason?: string; message: string } };

const opened = new Map<string, Promise<IndexedDbStores>>();
const leases = new Map<string, WriterLease>();
const waitingLeases = new Map<string, Promise<Outcome<string>>>();
const watched = new Map<string, ExecutionInfo[][]>();

async function settle<T>(work: Promise<T> | (() => Promise<T>)): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await (typeof work === "function" ? work() : work) };
  } catch (error) {
    const e = error as { name?: string; code?: string; reason?: string; message?: string };
    return {
      ok: false,
      error: { name: e.name ?? "Error", code: e.code, reason: e.reason, message: e.message ?? String(error) },
    };
  }
}

const loom = {
  ready: true,
  schema,
  SCHEMA_VERSION,
  utf8,
  fromUtf8,
  settle,

  /** The stores on database `name`, opened once per page load. */
  stores(name: string): Promise<IndexedDbStores> {
    let stores = opened.get(name);
    if (!stores) opened.set(name, (stores = indexedDbStores({ name })));
    return stores;
  },

  /** Takes the writer lock of `executionId` (waiting for it when `wait`); resolves with the resource name. */
  acquireWriter(name: string, executionId: string, wait = false): Promise<Outcome<string>> {
    return settle(async () => {
      const lease = await acquireWriter(name, executionId, { wait });
      leases.set(`${name}/${executionId}`, lease);
      return lease.resource;
    });
  },

  /** Starts waiting for the writer lock without blocking the caller; see `writerGranted`. */
  waitForWriter(name: string, executionId: string): void {
    waitingLeases.set(`${name}/${executionId}`, loom.acquireWriter(name, executionId, true));
  },

  /** Resolves once the lock asked for by `waitForWriter` was granted (or refused). */
  writerGranted(name: string, executionId: string): Promise<Outcome<string>> | undefined {
    return waitingLeases.get(`${name}/${executionId}`);
  },

  holdsWriter(name: string, executionId: string): boolean {
    return leases.has(`${name}/${executionId}`);
  },

  async releaseWriter(name: string, executionId: string): Promise<void> {
    await leases.get(`${name}/${executionId}`)?.release();
    leases.delete(`${name}/${executionId}`);
  },

  /** Keeps every list the live catalogue of `name` emits, newest last. */
  watch(name: string): void {
    const lists: ExecutionInfo[][] = [];
    watched.set(name, lists);
    watchExecutions(name, (list) => lists.push(list));
  },

  watched(name: string): ExecutionInfo[][] {
    return watched.get(name) ?? [];
  },

  /** createApp on memory stores (no IndexedDB): what an app's boot refuses, here. */
  bootApp(): Promise<Outcome<null>> {
    return settle(async () => {
      createApp(defineConfig({ stores: memoryStores(), effects: {} }));
      return null;
    });
  },

  /** An agentLoop$ run in this tab on IndexedDB, with call counters that survive a reload (see agent.ts). */
  agent: createAgentDriver((name): Promise<IndexedDbStores> => loom.stores(name), settle),
  tree: createTreeDriver((name): Promise<IndexedDbStores> => loom.stores(name), settle),
  /** A tree of agents (sub-agents and a handoff) on a real provider, reloadable mid-tree (see agentTree.ts). */
  agentTree: createAgentTreeDriver((name): Promise<IndexedDbStores> => loom.stores(name), settle),

  /** An agent on a real AI SDK provider calling the test's loopback server, streamed, with approvals (see realModel.ts). */
  realModel: createRealModelDriver((name): Promise<IndexedDbStores> => loom.stores(name), settle),

  /** One agent run on a real provider, reported whole: driven online and after the page lost its server (see offline.ts). */
  offline: createOfflineDriver((name): Promise<IndexedDbStores> => loom.stores(name), settle),
};

export type LoomPage = typeof loom;

declare global {
  interface Window {
    loom: LoomPage;
  }
}

window.loom = loom;
