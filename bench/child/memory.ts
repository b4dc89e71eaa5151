// Retained heap per finished execution, in a fresh `node --expose-gc` process: the heap after a full GC
// before the runs, after `executions` finished 30-turn agent runs with the app still open, after
// `app.close()` (the app and its stores still referenced, as a desktop process keeps them), after the app
// is let go (what remains is the stores' and the process's), and after the stores are closed too. fs stores with fsync made a no-op: durability is not what is measured here, and
// the store's own catalogue is the only per-execution state it keeps. Shared by `npm run bench` (bench/
// memory.ts) and spec/reliability/memory.test.ts.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getHeapSpaceStatistics } from "node:v8";
import { createApp } from "../../actors/app.js";
import { fsStores } from "../../adapters/fs/index.js";
import { benchConfig, benchLoop } from "../agent.js";
import { report } from "../spawn.js";
import { workloadEffects } from "../../spec/support/workload.js";

export interface MemoryArgs {
  /** Finished executions measured. */
  executions: number;
  turns: number;
  /** Executions run before the baseline (JIT, caches), in another app over other stores. */
  warmup: number;
  /** Executions running at once. */
  concurrency: number;
  /** `execution.settledCache` of the measured app (unset: the default). */
  settledCache?: number;
}

export interface MemoryReport {
  executions: number;
  turns: number;
  settledCache: number | null;
  /** Heap bytes after a full GC (code space excluded): before the runs, after them, after app.close(), after stores.close(). */
  before: number;
  open: number;
  closed: number;
  /** After app.close() and dropping the app (stores still open): `open - appDropped` and `closed - appDropped` are the app's share. */
  appDropped: number;
  storesClosed: number;
  /** What `app.result` of the first and of the last execution gave with the app open, and after `app.close()`. */
  openResults: unknown[];
  closedResults: unknown[];
  ms: number;
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("bench/child/memory.ts needs node --expose-gc");
// Bytecode flushing drops idle functions' bytecode at a GC and the next call compiles it again: the heap
// would move with which code ran last (bench/memory.ts, MEMORY_CHILD_FLAGS).
if (!process.execArgv.includes("--no-flush-bytecode"))
  throw new Error("bench/child/memory.ts needs node --no-flush-bytecode");
// TurboFan's background compiles keep data beside the code space; one finished between two measurements
// or not moved the heap by up to 245 kB (bench/memory.ts, MEMORY_CHILD_FLAGS).
if (!process.execArgv.includes("--no-opt")) throw new Error("bench/child/memory.ts needs node --no-opt");

/**
 * The heap in use after a full GC, without V8's code space: compiled code grows as the JIT optimizes more
 * of the runtime over a run, whatever the app retains, so it is no part of what an execution leaves behind.
 */
async function heap(): Promise<number> {
  // A few rounds, a turn of the event loop apart: finalizers and weak callbacks free more on the next one.
  for (let i = 0; i < 4; i++) {
    gc!();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  gc!();
  const code = getHeapSpaceStatistics().find((space) => space.space_name === "code_space")?.space_used_size ?? 0;
  return process.memoryUsage().heapUsed - code;
}

const args = JSON.parse(process.argv[2] ?? "{}") as MemoryArgs;
// The machine and the effects are the process's, as in an app that builds them once at module level: the
// code the JIT compiles for them is not what the app holds for its executions.
const loop = benchLoop(args.turns);
const { effects } = workloadEffects(args.turns);

const noSync = { fsync: async () => undefined, fsyncDir: async () => undefined };

async function runAll(args: MemoryArgs, count: number, prefix: string, settledCache?: number) {
  const dir = await mkdtemp(join(tmpdir(), "loomwork-bench-memory-"));
  const stores = await fsStores({ dir, fsOps: noSync });
  const config = benchConfig(stores, args.turns, "off", effects);
  const app = createApp(
    settledCache === undefined ? config : { ...config, execution: { ...config.execution, settledCache } },
  );
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(5, "0")}`);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(args.concurrency, count) }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        await app.start(loop, { executionId: id, input: { prompt: "research" } });
        await app.result(id);
      }
    }),
  );
  return { dir, stores, app, ids };
}

{
  const warm = await runAll(args, args.warmup, "warm");
  await warm.app.close();
  await warm.stores.close();
  await rm(warm.dir, { recursive: true, force: true });
}
const before = await heap();
const t0 = performance.now();
const run: Partial<Awaited<ReturnType<typeof runAll>>> & Omit<Awaited<ReturnType<typeof runAll>>, "app"> = await runAll(
  args,
  args.executions,
  "run",
  args.settledCache,
);
const ms = performance.now() - t0;
// The app answers for what it ran: from its cache, or from the journal once evicted (or closed).
const resultOf = (id: string) => run.app!.result(id).catch((error: unknown) => ({ rejected: String(error) }));
const openResults = [await resultOf(run.ids[0]!), await resultOf(run.ids.at(-1)!)];
const open = await heap();
await run.app!.close();
const closedResults = [await resultOf(run.ids[0]!), await resultOf(run.ids.at(-1)!)];
const closed = await heap();
// The same heap with the app let go (its stores still referenced): the difference is what the app holds.
delete run.app;
const appDropped = await heap();
await run.stores.close();
const storesClosed = await heap();
await rm(run.dir, { recursive: true, force: true });
const facts: MemoryReport = {
  executions: args.executions,
  turns: args.turns,
  settledCache: args.settledCache ?? null,
  before,
  open,
  closed,
  appDropped,
  storesClosed,
  openResults,
  closedResults,
  ms,
};
// `run` is a module binding: the app and its stores stay referenced through every measurement.
report({ ...facts });
