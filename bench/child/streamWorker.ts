// A worker process of the streams-across-processes measurement (bench/streamsAcross.ts): `createWorker` running a
// one-turn agent on a real AI SDK provider against the loopback server. For each execution it starts, it reads its own
// `app.stream` from the start and prints when the first text-delta arrived (`first <id> <epoch ms>`): the same stream
// read on the worker, beside the web server's read in the benchmark's process; and when it was on its bus (`bus ...`).
import { createLlmEffect } from "../../actors/agents/model.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { createWorker, postgresStores } from "../../adapters/postgres/index.js";
import { PROVIDERS } from "../../spec/support/providers.js";
import { streamingAgent as streamAgent } from "../../spec/postgres/fleet.js";

const { url, schema, baseURL } = JSON.parse(process.argv[2]!) as { url: string; schema: string; baseURL: string };
const now = () => performance.timeOrigin + performance.now();
const stores = await postgresStores({ url, schema, pollMs: 50 });
const worker = await createWorker({
  stores,
  logics: [streamAgent],
  effects: { model: createLlmEffect(fromAiSdk(PROVIDERS[2]!.model(baseURL))) },
  concurrency: 1,
  pollMs: 50,
  signals: ["SIGTERM"],
});
// The submitter journaled the start: the worker's first append of an execution is where it begins to run it here.
const seen = new Set<string>();
worker.app.on("append", ({ executionId }) => {
  if (seen.has(executionId)) return;
  seen.add(executionId);
  void (async () => {
    for await (const part of worker.app.stream(executionId))
      if (part.type === "text-delta") {
        process.stdout.write(`first ${executionId} ${now()}\n`);
        return;
      }
  })();
});
// The floor: the first delta on the worker's bus, as the model step reports it.
const delivered = new Set<string>();
worker.app.on("delta", ({ executionId, delta }) => {
  if (delta.type !== "text-delta" || delivered.has(executionId)) return;
  delivered.add(executionId);
  process.stdout.write(`bus ${executionId} ${now()}\n`);
});
process.stdout.write("ready\n");
