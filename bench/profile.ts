// A CPU profile of some work, bucketed by module: where a missed goal's time goes. Self time per bucket
// (xstate, each runtime file, the memory store, GC, ...), from V8's sampling profiler via node:inspector.
import { Session } from "node:inspector/promises";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The bucket a frame's self time goes to: a runtime file, a dependency, GC, or Node itself. */
export function bucketOf(frame: ProfileNode["callFrame"]): string | undefined {
  const { url, functionName } = frame;
  if (functionName === "(idle)") return "idle (event loop waiting)";
  if (functionName === "(garbage collector)") return "garbage collection";
  const path = url.startsWith("file://") ? fileURLToPath(url) : url;
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (dep) return dep[1] === "tsx" || dep[1] === "esbuild" ? "tsx loader" : dep[1]!;
  if (path.startsWith(ROOT)) {
    const rel = path.slice(ROOT.length);
    if (rel.startsWith("bench/")) return "the benchmark harness";
    if (rel.startsWith("spec/support/workload")) return "the workload's effects";
    return rel.replace(/\.ts$/, "");
  }
  if (path.startsWith("node:")) return "node internals";
  if (functionName === "(program)") return "V8 (program)";
  if (path === "") return `native ${functionName || "(anonymous)"}`;
  return "other";
}

/** Milliseconds of self time per bucket while `work` runs (sampled every 100 µs). */
export async function profileBuckets(work: () => Promise<unknown>): Promise<Record<string, number>> {
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
    let failure: unknown;
    await work().catch((error: unknown) => (failure = error ?? new Error("the profiled work failed")));
    const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: Profile };
    if (failure !== undefined) throw failure;
    return bucket(profile);
  } finally {
    session.disconnect();
  }
}

function bucket(profile: Profile): Record<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const out: Record<string, number> = {};
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const name = node && bucketOf(node.callFrame);
    if (name) out[name] = (out[name] ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000;
  });
  return out;
}

/** Adds `b` into `a` (bucket totals over several profiled runs). */
export function addBuckets(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  for (const [k, v] of Object.entries(b)) a[k] = (a[k] ?? 0) + v;
  return a;
}
