// Measurement: opening and listing an IndexedDB database of many executions (issue 18), under
// fake-indexeddb (in-process). N executions (1,000 and 10,000; 100 and 200 in --quick), each a started
// record and a step, written through the adapter. Then, interleaved: "open + list", which is
// `indexedDbStores({ name })` then `events.listExecutions()` (what an app that lists its executions
// does), against the floor, a bare `indexedDB.open(name)` and one `getAll()` of the catalogue's object
// store. Goals: linear in executions (time per execution at 10,000 within 1.5x of that at 1,000) and within
// 3x of the floor.
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { indexedDbStores } from "../adapters/indexeddb/index.js";
import { EXECUTION_STARTED } from "../stores/schema.js";
import type { StoredRecord } from "../stores/types.js";
import { interleave, medianSample, span } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { ratio, ratios, type Goal, type Section } from "./report.js";

const started = (at: number, subject: string): StoredRecord =>
  ({ seq: 1, at, type: EXECUTION_STARTED, subject }) as unknown as StoredRecord;

async function seed(factory: IDBFactory, name: string, executions: number): Promise<void> {
  const stores = await indexedDbStores({ name, indexedDB: factory, IDBKeyRange, locks: null });
  const batch = 100;
  for (let i = 0; i < executions; i += batch) {
    const appends: Promise<void>[] = [];
    for (let j = i; j < Math.min(executions, i + batch); j++) {
      const id = `run-${String(j).padStart(6, "0")}`;
      appends.push(
        stores.events.append(id, 0, [
          started(1_000 + j, `user-${j % 97}`),
          { seq: 2, at: 2_000 + j, type: "step", stepId: "s" } as unknown as StoredRecord,
        ]),
      );
    }
    await Promise.all(appends);
  }
  await stores.close();
}

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

interface Row {
  executions: number;
  listMs: number;
  floorMs: number;
  ratio: { wall: number; cpu: number };
}

async function measureScale(executions: number, reps: number, warmup: number): Promise<Row> {
  const factory = new IDBFactory();
  const name = `catalogue-${executions}`;
  await seed(factory, name, executions);
  const samples = await interleave(
    {
      "open + list": async () => {
        const end = span();
        const stores = await indexedDbStores({ name, indexedDB: factory, IDBKeyRange, locks: null });
        const list = await stores.events.listExecutions();
        const sample = end();
        await stores.close();
        if (list.length !== executions) throw new Error(`listed ${list.length} of ${executions} executions`);
        return sample;
      },
      floor: async () => {
        const end = span();
        const db = await request(factory.open(name));
        const rows = await request(db.transaction(["executions"], "readonly").objectStore("executions").getAll());
        const sample = end();
        db.close();
        if (rows.length !== executions) throw new Error(`read ${rows.length} of ${executions} rows`);
        return sample;
      },
    },
    { reps, warmup },
  );
  const list = medianSample(samples["open + list"]!);
  const floor = medianSample(samples.floor!);
  return {
    executions,
    listMs: list.wall,
    floorMs: floor.wall,
    ratio: { wall: list.wall / floor.wall, cpu: list.cpu / floor.cpu },
  };
}

export async function measureBrowserCatalogue(options: BenchOptions): Promise<Section> {
  const quick = options.mode === "quick";
  const scales = quick ? [100, 200] : [1_000, 10_000];
  const reps = quick ? 1 : 9;
  const rows: Row[] = [];
  for (const n of scales) rows.push(await measureScale(n, reps, quick ? 0 : 1));
  const [small, large] = [rows[0]!, rows[rows.length - 1]!];
  const growth = large.listMs / large.executions / (small.listMs / small.executions);
  const goals: Goal[] = [
    {
      goal: `IndexedDB (fake-indexeddb): open + list ${large.executions.toLocaleString("en-US")} executions ≤ 3x reading the catalogue`,
      met: large.ratio.wall <= 3,
      detail: ratios(large.ratio),
    },
    {
      goal: `IndexedDB (fake-indexeddb): open + list linear in executions (per execution at ${large.executions.toLocaleString("en-US")} ≤ 1.5x that at ${small.executions.toLocaleString("en-US")})`,
      met: growth <= 1.5,
      detail: `${ratio(growth)} per execution`,
    },
  ];
  return {
    id: "browserCatalogue",
    title: "Opening and listing an IndexedDB database of many executions",
    method: [
      `fake-indexeddb, in-process. N executions (${scales.map((n) => n.toLocaleString("en-US")).join(" and ")}) of two records each, written through the adapter. Interleaved, ${reps} rounds after a warm-up, medians: \`indexedDbStores({ name })\` + \`events.listExecutions()\` against a bare \`indexedDB.open(name)\` + one \`getAll()\` of the \`executions\` object store.`,
    ],
    tables: [
      {
        caption: "Open + list vs the floor (a bare open and getAll of the catalogue)",
        head: ["executions", "open + list / floor (wall; CPU)", "per execution, relative to the smallest row"],
        rows: rows.map((r) => [
          r.executions,
          ratios(r.ratio),
          ratio(r.listMs / r.executions / (small.listMs / small.executions)),
        ]),
      },
    ],
    goals,
    notes: [],
    raw: rows,
  };
}
