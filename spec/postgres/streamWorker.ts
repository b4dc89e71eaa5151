// A worker process of the streams-across-processes takeover test (spec/postgres/streams.test.ts): `createWorker`
// running the one-turn streaming agent on a real AI SDK provider against the test's loopback server, until killed.
import { createLlmEffect } from "../../actors/agents/model.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { createWorker, postgresStores } from "../../adapters/postgres/index.js";
import { PROVIDERS } from "../support/providers.js";
import { streamingAgent } from "./fleet.js";

const { url, schema, baseURL, name } = JSON.parse(process.argv[2]!) as {
  url: string;
  schema: string;
  baseURL: string;
  name: string;
};
const stores = await postgresStores({ url, schema, pollMs: 100, max: 4 });
await createWorker({
  stores,
  logics: [streamingAgent],
  effects: { model: createLlmEffect(fromAiSdk(PROVIDERS[2]!.model(baseURL))) },
  concurrency: 1,
  leaseMs: 1_500,
  pollMs: 100,
  drainMs: 1_000,
  id: name,
  signals: ["SIGTERM"],
});
process.stdout.write(`ready ${name}\n`);
