// A process that runs (or resumes) a two-tool agent on fsStores against the loopback server through a real
// provider, printing its stream parts live. The parent SIGKILLs it mid-stream and starts a fresh one.
//
// argv[2]: JSON { dir, baseURL, provider (index into PROVIDERS), mode: "start" | "resume" }
// stdout:  "part <StreamPart JSON>" per part, "tool <name>" per tool run, "result <JSON>" at the end.
import { z } from "zod";
import { agentLoop$ } from "../../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../../actors/agents/model.js";
import { createApp } from "../../../actors/app.js";
import { defineConfig } from "../../../actors/config.js";
import { createToolEffect } from "../../../actors/effects/effect.js";
import { fromAiSdk } from "../../../adapters/ai-sdk/index.js";
import { fsStores } from "../../../adapters/fs/index.js";
import { PROVIDERS } from "../../support/providers.js";

const options = JSON.parse(process.argv[2]!) as {
  dir: string;
  baseURL: string;
  provider: number;
  mode: "start" | "resume";
};
const out = (line: string) => process.stdout.write(`${line}\n`);

const stores = await fsStores({ dir: options.dir });
const app = createApp(
  defineConfig({
    stores,
    effects: {
      model: createLlmEffect(fromAiSdk(PROVIDERS[options.provider]!.model(options.baseURL))),
      search: createToolEffect(async ({ q }) => (out("tool search"), { hits: [`${q}: by sound`] }), {
        inputSchema: z.object({ q: z.string() }),
      }),
      measure: createToolEffect(async ({ bird }) => (out("tool measure"), { bird, wingspanCm: 95 }), {
        inputSchema: z.object({ bird: z.enum(["barn owl", "tawny owl"]) }),
      }),
    },
  }),
);
const loop = agentLoop$({ id: "owl", model: "model", tools: ["search", "measure"] });
// Read once the execution exists (app.stream of an id with no execution rejects): the deltas that arrived
// before wait on its tape, the records in the journal, so the stream still starts at the run's beginning.
if (options.mode === "start")
  await app.start(loop, { executionId: "run", input: { prompt: "How do barn owls hunt?" } });
else await app.resume("run", loop);
const printing = (async () => {
  for await (const part of app.stream("run")) out(`part ${JSON.stringify(part)}`);
})();
out(`result ${JSON.stringify(await app.result("run"))}`);
await printing;
await app.close();
