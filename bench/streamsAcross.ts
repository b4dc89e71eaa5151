// Measurement: streams across processes (issue 37, ADR 0019). A worker process runs a one-turn agent on a real AI SDK
// provider against the loopback server (its own process); this process is the web server: it submits the execution
// and reads `app.stream` of it at once. Time to the first text-delta from the submit, at the web server (the worker's
// deltas through the stream items table and LISTEN/NOTIFY) and on the worker (its own app.stream), for the same
// executions; the medians compared. A throwaway local cluster (fsync off) or LOOMWORK_PG_URL.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { postgresStores } from "../adapters/postgres/index.js";
import { dropSchema, freshSchema, startPostgres } from "../spec/postgres/server.js";
import { median } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { ratio, type Section } from "./report.js";
import { streamingAgent as streamAgent } from "../spec/postgres/fleet.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const GOAL = 1.25;
const TEXT = "Owls hunt by sound: their ears sit at different heights, so a sound reaches one ear first. ".repeat(4);
const now = () => performance.timeOrigin + performance.now();

interface Lines {
  child: ChildProcess;
  next(match: (line: string) => boolean): Promise<string>;
}

// A child process of this measurement, and the lines it prints; resolves with its first line that `ready` matches.
async function start(
  script: string,
  args: unknown,
  ready: (line: string) => boolean,
): Promise<Lines & { first: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", script, JSON.stringify(args)], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, NODE_NO_WARNINGS: "1" },
  });
  const seen: string[] = [];
  const waiting = new Set<() => boolean>();
  let rest = "";
  let err = "";
  let exited: Error | undefined;
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  child.stdout!.on("data", (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split("\n");
    rest = lines.pop()!;
    seen.push(...lines);
    for (const look of [...waiting]) look();
  });
  child.on("exit", (code) => {
    exited = new Error(`${script} exited with ${code}: ${err.slice(-1500)}`);
    for (const look of [...waiting]) look();
  });
  const next = (match: (line: string) => boolean) =>
    new Promise<string>((resolve, reject) => {
      const look = () => {
        const at = seen.findIndex(match);
        if (at < 0 && !exited) return false;
        waiting.delete(look);
        if (at < 0) reject(exited!);
        else resolve(seen.splice(at, 1)[0]!);
        return true;
      };
      if (!look()) waiting.add(look);
    });
  return { child, next, first: await next(ready) };
}

export async function measureStreamsAcross(options: BenchOptions): Promise<Section> {
  const reps = options.mode === "quick" ? 3 : 41;
  const warmup = options.mode === "quick" ? 1 : 5;
  const server = await startPostgres();
  const schema = freshSchema("streams");
  const stores = await postgresStores({ url: server.url, schema, pollMs: 50 });
  const model = await start("bench/child/openaiServer.ts", { text: TEXT, chunkChars: 16 }, (l) => l.startsWith("http"));
  const worker = await start(
    "bench/child/streamWorker.ts",
    { url: server.url, schema, baseURL: model.first },
    (l) => l === "ready",
  );
  const app = createApp(defineConfig({ stores, effects: {} }));
  const web: number[] = [];
  const onWorker: number[] = [];
  const onBus: number[] = [];
  try {
    for (let rep = 0; rep < warmup + reps; rep++) {
      const executionId = `s${rep}`;
      const workerFirst = worker.next((line) => line.startsWith(`first ${executionId} `));
      const busFirst = worker.next((line) => line.startsWith(`bus ${executionId} `));
      const t0 = now();
      await app.submit(streamAgent, { executionId, input: { prompt: "How do owls hunt?" } });
      let tWeb = Number.NaN;
      for await (const part of app.stream(executionId))
        if (part.type === "text-delta" && Number.isNaN(tWeb)) tWeb = now();
      const tWorker = Number((await workerFirst).split(" ")[2]);
      const tBus = Number((await busFirst).split(" ")[2]);
      if (rep < warmup) continue;
      web.push(tWeb - t0);
      onWorker.push(tWorker - t0);
      onBus.push(tBus - t0);
    }
  } finally {
    await app.close();
    worker.child.kill("SIGTERM");
    model.child.stdin!.end();
    await stores.close();
    await dropSchema(server.url, schema).catch(() => undefined);
    await server.dispose();
  }
  const webMs = median(web);
  const workerMs = median(onWorker);
  const busMs = median(onBus);
  const r = webMs / workerMs;
  const perRun = median(web.map((w, i) => w - onWorker[i]!));
  return {
    id: "streamsAcross",
    title: "Streams across processes: time to first delta at the web server and on the worker",
    method: [
      `A worker process (\`bench/child/streamWorker.ts\`, \`createWorker\`, concurrency 1) runs a one-turn agent whose model is \`${"@ai-sdk/openai-compatible"}\` 3.x against the loopback OpenAI-compatible server in a process of its own (${TEXT.length} characters in 16-character chunks). This process is the web server: an app on the same schema (its own pool and LISTEN connection) submits each execution and reads \`app.stream\` of it at once; the worker reads its own \`app.stream\` of the same execution from its start. Time from the submit to the first text-delta at each, ${reps} executions one after another after ${warmup} unrecorded ones, on a throwaway local cluster (fsync off); medians.`,
    ],
    tables: [
      {
        head: ["reader", "time to first delta (median)", "vs the worker's"],
        rows: [
          [
            "the worker's bus (the model step reports the delta: the floor)",
            `${busMs.toFixed(2)} ms`,
            ratio(busMs / workerMs),
          ],
          ["app.stream on the worker that runs it", `${workerMs.toFixed(2)} ms`, "1.00x"],
          ["app.stream in the web server (another process)", `${webMs.toFixed(2)} ms`, ratio(r)],
        ],
      },
    ],
    goals: [
      {
        goal: `time to first delta at the web server within ${GOAL}x of the same stream read on the worker`,
        met: r <= GOAL,
        detail: `${ratio(r)} (the web server ${perRun.toFixed(2)} ms later, median per execution)`,
      },
    ],
    notes: [
      `Beyond the floor (the delta on the worker's bus), the web server's read took ${(webMs - busMs).toFixed(2)} ms (medians). ` +
        "The web server's delta took one more hop: the worker's insert into the stream items table with its notification, then the web server's read of the rows after the notification.",
      `The worker's own read starts later than the web server's: it is opened at the worker's first append of the execution (after its claim), and hands out nothing before its journal read; the web server opened its stream at the submit, so its journal was read before the first delta came. Against the floor the web server's read is ${ratio(webMs / busMs)}.`,
    ],
    raw: { web, onWorker, onBus },
  };
}
