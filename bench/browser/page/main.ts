// The page bench/browser.ts drives in Chromium on a persistent profile: the bench workload's agent
// (an agentLoop$ on the scripted model, 1.5-4 kB of tool output per turn, claim-check off) on memory
// and on IndexedDB, the bare strict-durability transactions its IndexedDB run committed (the floor),
// and a resume after a reload against a raw read of the records that resume read. Results cross
// page.evaluate() as plain JSON; times are performance.now() spans in this page.
import { agentLoop$ } from "../../../actors/agents/agentLoop.js";
import { createApp } from "../../../actors/app.js";
import { defineConfig } from "../../../actors/config.js";
import { createToolEffect, type Effect } from "../../../actors/effects/effect.js";
import { indexedDbStores } from "../../../adapters/indexeddb/index.js";
import { appendToCatalogue } from "../../../stores/catalogue.js";
import { memoryStores } from "../../../stores/memory.js";
import { EXECUTION_STARTED, STEP_COMPLETED } from "../../../stores/schema.js";
import type { StoredRecord, Stores } from "../../../stores/types.js";
import { workloadEffects } from "../../../spec/support/workload.js";

const EXECUTION_ID = "bench";
const loop = (turns: number) =>
  agentLoop$({ id: "harness", model: "model", tools: ["search"], maxTurns: turns, warnTranscriptBytes: false });

/** One write transaction the IndexedDB stores committed: what it stored, as structured-clone values. */
type Write = { kind: "append" | "snapshot" | "blob"; values: unknown[] };

/** Wraps the writing methods of `stores` so every committed write transaction is logged with its values. */
function logWrites(stores: Stores): Write[] {
  const writes: Write[] = [];
  const { events, content } = stores;
  const append = events.append.bind(events);
  events.append = async (id, seq, records) => {
    await append(id, seq, records);
    writes.push({ kind: "append", values: records });
  };
  const putSnapshot = events.putSnapshot.bind(events);
  events.putSnapshot = async (id, snapshot) => {
    await putSnapshot(id, snapshot);
    writes.push({ kind: "snapshot", values: [snapshot] });
  };
  const put = content.put.bind(content);
  content.put = async (bytes, options) => {
    const address = await put(bytes, options);
    writes.push({ kind: "blob", values: [bytes] });
    return address;
  };
  return writes;
}

/** The workload's effects; with `stallAt`, that turn's tool call never resolves (a run cut off mid-call). */
function effects(turns: number, stallAt?: number): { effects: Record<string, Effect>; reached: Promise<void> } {
  const { effects: base } = workloadEffects(turns);
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  if (stallAt === undefined) return { effects: base, reached };
  const search = base.search!;
  return {
    reached,
    effects: {
      ...base,
      search: createToolEffect((input: unknown, ctx) => {
        const turn = Number(/turn:(\d+):tool/.exec(ctx.stepId)?.[1] ?? 0);
        if (turn < stallAt) return search.run(input, ctx);
        reach();
        return new Promise<never>(() => undefined);
      }),
    },
  };
}

let lastWrites: Write[] = [];

/** Counts and times every call a resume makes on the stores (besides the read and snapshot timed apart). */
function timeCalls(stores: Stores): Record<string, { n: number; ms: number }> {
  const calls: Record<string, { n: number; ms: number }> = {};
  for (const [part, store] of Object.entries({ events: stores.events, content: stores.content, keys: stores.keys })) {
    const target = store as unknown as Record<string, unknown>;
    let proto = Object.getPrototypeOf(store) as object | null;
    const names = new Set<string>();
    while (proto && proto !== Object.prototype) {
      for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(proto)))
        if (typeof descriptor.value === "function") names.add(name);
      proto = Object.getPrototypeOf(proto) as object | null;
    }
    for (const name of names) {
      const method = target[name];
      if (name === "constructor" || typeof method !== "function" || Object.hasOwn(target, name)) continue;
      const key = `${part}.${name}`;
      target[name] = (...args: unknown[]) => {
        const t0 = performance.now();
        const result = (method as (...a: unknown[]) => unknown).apply(store, args);
        const done = () => {
          const entry = (calls[key] ??= { n: 0, ms: 0 });
          entry.n++;
          entry.ms += performance.now() - t0;
        };
        if (result instanceof Promise) result.then(done, done);
        else done();
        return result;
      };
    }
  }
  return calls;
}

/** Parses the JSON text of a version 2 snapshot row (adapters/indexeddb/schema.ts); other values are left as read. */
function decodeSnapshotRow(row: unknown): unknown {
  const text = (row as { text?: unknown } | undefined)?.text;
  return typeof text === "string" ? JSON.parse(text) : row;
}

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function committed(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error("aborted"));
  });
}

async function openBare(name: string): Promise<IDBDatabase> {
  const open = indexedDB.open(name, 1);
  open.onupgradeneeded = () => open.result.createObjectStore("records");
  return request(open);
}

const bench = {
  ready: true,

  /**
   * Creates database `db` with `executions` executions of two records each, written as the adapter lays
   * them out (records keyed [id, seq], catalogue rows folded by the adapter's own fold) in one transaction.
   */
  async seedCatalogue(db: string, executions: number): Promise<void> {
    const stores = await indexedDbStores({ name: db });
    await stores.close();
    const database = await request(indexedDB.open(db));
    const tx = database.transaction(["records", "executions"], "readwrite");
    for (let i = 0; i < executions; i++) {
      const id = `run-${String(i).padStart(6, "0")}`;
      const records = [
        {
          seq: 1,
          at: 1_000 + i,
          type: EXECUTION_STARTED,
          subject: `user-${i % 97}`,
          machineId: "bench",
          input: { prompt: "research" },
        },
        { seq: 2, at: 2_000 + i, type: STEP_COMPLETED, stepId: "s", output: "done" },
      ] as unknown as StoredRecord[];
      for (const record of records) tx.objectStore("records").put(record, [id, record.seq]);
      tx.objectStore("executions").put(appendToCatalogue(id, undefined, 0, records));
    }
    await committed(tx);
    database.close();
  },

  /** Opens the stores on `db` and lists its executions (what an app that shows its executions does). */
  async openAndList(db: string): Promise<{ ms: number; executions: number }> {
    const t0 = performance.now();
    const stores = await indexedDbStores({ name: db });
    const list = await stores.events.listExecutions();
    const ms = performance.now() - t0;
    await stores.close();
    return { ms, executions: list.length };
  },

  /** The floor of openAndList: a bare open of `db` and one getAll of its catalogue object store. */
  async readCatalogue(db: string): Promise<{ ms: number; executions: number }> {
    const t0 = performance.now();
    const database = await request(indexedDB.open(db));
    const rows = await request(database.transaction(["executions"], "readonly").objectStore("executions").getAll());
    const ms = performance.now() - t0;
    database.close();
    return { ms, executions: rows.length };
  },

  /** Runs the agent for `turns` on memory or on IndexedDB database `db`; returns ms and the writes' shape. */
  async run(
    store: "memory" | "indexeddb",
    turns: number,
    db: string,
  ): Promise<{ ms: number; writes: number; appends: number; values: number; bytes: number }> {
    const stores = store === "memory" ? memoryStores() : await indexedDbStores({ name: db });
    const writes = store === "memory" ? [] : logWrites(stores);
    const app = createApp(defineConfig({ stores, effects: effects(turns).effects }));
    const t0 = performance.now();
    await app.start(loop(turns), { executionId: EXECUTION_ID, input: { prompt: "research" } });
    await app.result(EXECUTION_ID);
    const ms = performance.now() - t0;
    await app.close();
    if ("close" in stores) await stores.close();
    lastWrites = writes;
    const values = writes.reduce((n, w) => n + w.values.length, 0);
    const bytes = writes.reduce(
      (n, w) =>
        n +
        w.values.reduce<number>((m, v) => m + (v instanceof Uint8Array ? v.byteLength : JSON.stringify(v).length), 0),
      0,
    );
    return { ms, writes: writes.length, appends: writes.filter((w) => w.kind === "append").length, values, bytes };
  },

  /** The floor: the last IndexedDB run's write transactions, bare (one strict readwrite transaction each, the same values), in database `db`. */
  async floor(db: string): Promise<{ ms: number; transactions: number }> {
    const database = await openBare(db);
    const t0 = performance.now();
    let key = 0;
    for (const write of lastWrites) {
      const tx = database.transaction(["records"], "readwrite", { durability: "strict" });
      const store = tx.objectStore("records");
      for (const value of write.values) store.put(value, ++key);
      await committed(tx);
    }
    const ms = performance.now() - t0;
    database.close();
    return { ms, transactions: lastWrites.length };
  },

  /** Runs the agent on `db` until the tool call of turn `turns - 2` hangs, then closes the app (a reload follows). */
  async interrupt(turns: number, db: string): Promise<void> {
    const stores = await indexedDbStores({ name: db });
    const { effects: stalling, reached } = effects(turns, turns - 2);
    const app = createApp(defineConfig({ stores, effects: stalling }));
    await app.start(loop(turns), { executionId: EXECUTION_ID, input: { prompt: "research" } });
    await reached;
    await new Promise((resolve) => setTimeout(resolve, 50));
    await app.close();
    await stores.close();
  },

  /** In a freshly loaded page: opens the stores and resumes the interrupted run; returns ms and what resume read. */
  async resume(
    turns: number,
    db: string,
  ): Promise<{
    ms: number;
    openMs: number;
    readMs: number;
    reads: { fromSeq: number }[];
    snapshotSeq: number | undefined;
    records: number;
    calls: Record<string, { n: number; ms: number }>;
    beforeReadsMs: number;
  }> {
    const t0 = performance.now();
    const stores = await indexedDbStores({ name: db });
    const openMs = performance.now() - t0;
    const reads: { fromSeq: number }[] = [];
    let snapshotSeq: number | undefined;
    let records = 0;
    let readMs = 0;
    // From the stores opened to the first read: the runtime's work before it reads (app, catalogue row, logic, writer lease).
    let beforeReadsMs: number | undefined;
    const reading = (r0: number) => (beforeReadsMs ??= r0 - t0 - openMs);
    const read = stores.events.read.bind(stores.events);
    stores.events.read = async (id, fromSeq) => {
      const r0 = performance.now();
      reading(r0);
      const got = await read(id, fromSeq);
      readMs += performance.now() - r0;
      reads.push({ fromSeq: fromSeq ?? 1 });
      records += got.length;
      return got;
    };
    const getSnapshot = stores.events.getSnapshot.bind(stores.events);
    stores.events.getSnapshot = async (id) => {
      const r0 = performance.now();
      reading(r0);
      const snapshot = await getSnapshot(id);
      readMs += performance.now() - r0;
      snapshotSeq = snapshot?.seq;
      return snapshot;
    };
    const calls = timeCalls(stores);
    const { effects: stalling, reached } = effects(turns, turns - 2);
    const app = createApp(defineConfig({ stores, effects: stalling }));
    await app.resume(EXECUTION_ID, loop(turns));
    await reached;
    const ms = performance.now() - t0;
    await app.close();
    await stores.close();
    return { ms, openMs, readMs, reads, snapshotSeq, records, calls, beforeReadsMs: beforeReadsMs ?? 0 };
  },

  /** In a freshly loaded page: the raw read of what resume read (the snapshot and the same key ranges), on IndexedDB directly. */
  async rawRead(
    db: string,
    ranges: { fromSeq: number }[],
    withSnapshot: boolean,
  ): Promise<{ ms: number; records: number }> {
    const t0 = performance.now();
    const database = await request(indexedDB.open(db));
    const tx = database.transaction(["records", "snapshots", "executions"], "readonly");
    const pending: Promise<unknown>[] = [request(tx.objectStore("executions").get(EXECUTION_ID))];
    if (withSnapshot) pending.push(request(tx.objectStore("snapshots").get(EXECUTION_ID)));
    for (const { fromSeq } of ranges)
      pending.push(
        request(tx.objectStore("records").getAll(IDBKeyRange.bound([EXECUTION_ID, fromSeq], [EXECUTION_ID, Infinity]))),
      );
    const results = await Promise.all(pending);
    // A snapshot row of schema version 2 holds the state as JSON text: a read of it is done once it is
    // parsed, as a structured value is once deserialised (a version 1 row is that value already).
    decodeSnapshotRow(withSnapshot ? results[1] : undefined);
    const ms = performance.now() - t0;
    database.close();
    return {
      ms,
      records: results.slice(withSnapshot ? 2 : 1).reduce<number>((n, r) => n + (r as unknown[]).length, 0),
    };
  },
};

export type BenchPage = typeof bench;

declare global {
  interface Window {
    bench: BenchPage;
  }
}

window.bench = bench;
