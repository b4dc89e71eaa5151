// A process that runs (or resumes) a tree of agents on fsStores against the loopback server through a real AI SDK
// provider: an orchestrator delegating two questions to researchers (agentTool) and handing off to a writer. The
// parent SIGKILLs it mid-tree and starts a fresh one.
//
// argv[2]: JSON { dir, baseURL, mode: "start" | "resume", slow?: string (a question whose search hangs) }
// stdout:  "model <execution> <step>" and "tool <execution> <step>" as each call starts, "ended <execution>",
//          "recorded <execution> <step>" (resume: every step with an outcome before it), "result <JSON>" at the end.
import { createLlmEffect } from "../../../actors/agents/model.js";
import { createApp } from "../../../actors/app.js";
import { defineConfig } from "../../../actors/config.js";
import { createToolEffect } from "../../../actors/effects/effect.js";
import { fromAiSdk } from "../../../adapters/ai-sdk/index.js";
import { fsStores } from "../../../adapters/fs/index.js";
import { STEP_COMPLETED } from "../../../stores/schema.js";
import { finding, orchestrator, searchInput } from "../../support/agentTree.js";
import { PROVIDERS } from "../../support/providers.js";

const options = JSON.parse(process.argv[2]!) as {
  dir: string;
  baseURL: string;
  mode: "start" | "resume";
  slow?: string;
};
const out = (line: string) => process.stdout.write(`${line}\n`);

const stores = await fsStores({ dir: options.dir });
if (options.mode === "resume")
  for (const info of await stores.events.listExecutions())
    for (const record of await stores.events.read(info.executionId))
      if (record.type === STEP_COMPLETED) out(`recorded ${info.executionId} ${String(record.stepId)}`);

const provider = createLlmEffect(fromAiSdk(PROVIDERS[2]!.model(options.baseURL)));
const app = createApp(
  defineConfig({
    stores,
    effects: {
      model: {
        ...provider,
        run: (request, ctx) => (out(`model ${ctx.executionId} ${ctx.stepId}`), provider.run(request, ctx)),
      },
      search: createToolEffect(
        async ({ q }, ctx) => {
          out(`tool ${ctx.executionId} ${ctx.stepId}`);
          // The slow question's search hangs in the first process: a tool in flight when it is killed.
          if (options.mode === "start" && q === options.slow)
            await new Promise((resolve) => setTimeout(resolve, 120_000));
          return { hits: [finding(q)] };
        },
        { inputSchema: searchInput },
      ),
    },
    logics: [orchestrator],
  }),
);
app.on("ended", ({ executionId }) => out(`ended ${executionId}`));
if (options.mode === "start")
  await app.start(orchestrator, { executionId: "run", input: { prompt: "How do owls and bats hunt?" } });
else {
  const { failed } = await app.resumeUnfinished();
  if (failed.length) throw failed[0]!.error;
}
out(`result ${JSON.stringify(await app.result("run"))}`);
await app.close();
