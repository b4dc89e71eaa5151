// The real resume from fs (bench/child/resumeFs.ts) in a fresh process, cut into phases by marks that
// change nothing it does: the fs event store's getSnapshot / read are wrapped to note when they start
// and end, and the stalled effect notes when it is called again. The phases therefore sum to the whole
// resume; garbage collection inside it is summed from PerformanceObserver's "gc" entries.
import { PerformanceObserver } from "node:perf_hooks";
import { fsStores } from "../../adapters/fs/index.js";
import { createApp } from "../../actors/app.js";
import { benchConfig, benchLoop, EXECUTION_ID, stallingEffects } from "../agent.js";
import { report } from "../spawn.js";

const { dir, turns } = JSON.parse(process.argv[2]!) as { dir: string; turns: number };
const gcs: { start: number; end: number }[] = [];
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcs.push({ start: entry.startTime, end: entry.startTime + entry.duration });
});
observer.observe({ entryTypes: ["gc"] });
const marks: Record<string, number> = {};
const calls: Record<string, number> = {};
const mark = (name: string) => (marks[name] ??= performance.now());

const cpu = process.cpuUsage();
marks.start = performance.now();
const stores = await fsStores({ dir });
mark("opened");
for (const method of ["getSnapshot", "read", "getExecution"] as const) {
  const original = stores.events[method].bind(stores.events) as (...args: unknown[]) => Promise<unknown>;
  (stores.events as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    calls[method] = (calls[method] ?? 0) + 1;
    mark(`${method} start`);
    const value = await original(...args);
    mark(`${method} end`);
    return value;
  };
}
const { effects, reached } = stallingEffects(turns);
void reached.then(() => mark("stalled call started"));
const app = createApp(benchConfig(stores, turns, "off", effects));
const machine = benchLoop(turns);
mark("app built");
await app.resume(EXECUTION_ID, machine);
mark("resumed");
const used = process.cpuUsage(cpu);
await new Promise((resolve) => setTimeout(resolve, 0));
observer.disconnect();
const gcIn = (from: number, to: number) =>
  gcs.reduce((sum, gc) => sum + Math.max(0, Math.min(gc.end, to) - Math.max(gc.start, from)), 0);
const order: [string, string, string][] = [
  ["open the directory (fsStores: recovery, writer lock)", "start", "opened"],
  ["build the app and the agent's definition (createApp, agentLoop$)", "opened", "app built"],
  ["app.resume up to the snapshot read (rebuild: catalogue entry, logic, Execution)", "app built", "getSnapshot start"],
  [
    "events.getSnapshot (fs: the log's first-use check, read, CRC-32, JSON.parse)",
    "getSnapshot start",
    "getSnapshot end",
  ],
  ["restore the XState snapshot, up to the tail read", "getSnapshot end", "read start"],
  ["events.read(id, fromSeq) (the tail)", "read start", "read end"],
  [
    "replay the tail and start the stalled call (planMacrostep per record, then the effect chain up to the effect)",
    "read end",
    "stalled call started",
  ],
  ["the stalled call's start until app.resume resolves", "stalled call started", "resumed"],
];
const phases: Record<string, number> = {};
const gc: Record<string, number> = {};
for (const [name, from, to] of order) {
  if (marks[from] === undefined || marks[to] === undefined)
    throw new Error(`no mark "${marks[from] === undefined ? from : to}": the resume took another path`);
  phases[name] = marks[to]! - marks[from]!;
  gc[name] = gcIn(marks[from]!, marks[to]!);
}
// Closed as bench/child/resumeFs.ts closes, so the next child (a resume or the floor) finds the directory
// closed cleanly, as the row says: left open, the next resume took over a dead writer's lock and recovered every log.
await app.close();
await stores.close();
report({
  ms: marks.resumed! - marks.start!,
  cpuMs: (used.user + used.system) / 1000,
  phases,
  gc,
  gcMs: gcIn(marks.start!, marks.resumed!),
  calls,
});
