// Story: real-model. The research agent through a real AI SDK provider (`@ai-sdk/openai-compatible` 3.x,
// LanguageModel v4) against an OpenAI-compatible server, its answer streamed to the terminal as the model
// writes it; then a fresh app over the same journal resumes the finished run and asks the server nothing.
//
//   npm run story real-model                   (an OpenAI-compatible server on 127.0.0.1 this story starts:
//                                               scripted replies, streamed over SSE, no network, no keys)
//   LOOMWORK_BASE_URL=http://127.0.0.1:11434/v1 LOOMWORK_MODEL=qwen3:4b npm run story real-model
//                                              (any OpenAI-compatible endpoint: Ollama, llama.cpp, vLLM, a
//                                               hosted API with LOOMWORK_API_KEY)
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOpenAICompatible } from "ai-sdk-openai-compatible-v3"; // "@ai-sdk/openai-compatible" in your app
import { z } from "zod";
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  fromAiSdk,
  tainted,
  type AgentLoopOutput,
} from "../index.js";
import { fsStores } from "../adapters/fs/index.js";
import { byTurn, startOpenAiServer } from "../spec/support/openaiServer.js";
import { colours } from "./support/terminal.js";

const c = colours();
const QUESTION = "How do barn owls catch prey in complete darkness?";
const PAGES: Record<string, { title: string; text: string }> = {
  "https://owls.example.org/konishi-1973": {
    title: "Konishi (1973)",
    text: "Barn owls struck mice in a light-tight room within one degree, guided by hearing alone.",
  },
  "https://owls.example.org/asymmetric-ears": {
    title: "Asymmetric ears",
    text: "The left ear sits higher: level difference gives elevation, time difference azimuth.",
  },
};

// Without LOOMWORK_BASE_URL, a loopback server plays the model: the same turns every run.
const given = process.env.LOOMWORK_BASE_URL;
const server = given
  ? undefined
  : await startOpenAiServer(
      byTurn([
        {
          toolCalls: [
            { id: "call_search", name: "search", arguments: JSON.stringify({ query: "barn owl hunting in darkness" }) },
          ],
        },
        {
          toolCalls: Object.keys(PAGES).map((url, i) => ({
            id: `call_fetch_${i}`,
            name: "fetchPage",
            arguments: JSON.stringify({ url }),
          })),
        },
        {
          reasoning: "Both pages agree: hearing, not sight.",
          text: "Barn owls hunt by ear [1]: in total darkness they strike within a degree of a rustling mouse, reading elevation from the level difference between their asymmetric ears and azimuth from the time difference [2].",
          chunkChars: 6,
        },
      ]),
    );
const baseURL = given ?? server!.baseURL;
const provider = createOpenAICompatible({
  name: "local",
  baseURL,
  includeUsage: true,
  ...(process.env.LOOMWORK_API_KEY ? { apiKey: process.env.LOOMWORK_API_KEY } : {}),
});
const model = fromAiSdk(provider.chatModel(process.env.LOOMWORK_MODEL ?? "scripted-owl"), {
  callOptions: { temperature: 0 },
});

const researcher = agentLoop$({
  id: "researcher",
  model: "model",
  system:
    "You are a careful research assistant. Search, read the relevant pages with fetchPage, then answer in two sentences citing [n].",
  tools: ["search", "fetchPage"],
  maxTurns: 8,
});
const effects = {
  model: createLlmEffect(model),
  search: createToolEffect(
    async ({ query }) => Object.entries(PAGES).map(([url, page]) => ({ url, title: page.title, query })),
    {
      description: "Web search: the top results for a query.",
      inputSchema: z.object({ query: z.string().min(3).describe("what to search for") }),
    },
  ),
  fetchPage: createToolEffect(async ({ url }) => tainted(PAGES[url] ?? { error: `no page at ${url}` }, "web"), {
    description: "Reads one page by its url (untrusted web content).",
    inputSchema: z.object({ url: z.string().url() }),
  }),
};

const dir = await mkdtemp(join(tmpdir(), "loomwork-real-model-"));
try {
  console.log(
    `${c.bold("real-model")}: the research agent through @ai-sdk/openai-compatible (LanguageModel ${provider.chatModel("x").specificationVersion}) at ${baseURL}`,
  );
  const stores = await fsStores({ dir });
  const app = createApp(defineConfig({ stores, effects, logics: [researcher] }));
  await app.start(researcher, { executionId: "research-1", input: { prompt: QUESTION } });
  // Read once it exists (app.stream refuses an id with no execution); what streamed before waits for the read.
  const printing = (async () => {
    let inText = false;
    for await (const part of app.stream("research-1")) {
      if (part.type === "text-delta") {
        if (!inText) process.stdout.write(`${c.dim("  answer  ")}`);
        inText = true;
        process.stdout.write(part.delta ?? "");
      } else if (part.type === "tool-call")
        console.log(`${c.dim("  tool    ")}${part.toolName}(${JSON.stringify(part.input)})`);
      else if (part.type === "finish-step" && inText) {
        process.stdout.write("\n");
        inText = false;
      }
    }
  })();
  const out = (await app.result("research-1")) as AgentLoopOutput;
  await printing;
  const usage = await app.usage("research-1");
  const calls = server?.requests.length;
  console.log(
    `  ${out.turns} turns · ${usage.inputTokens + usage.outputTokens} tokens · tainted input from: ${out.sawTaintFrom.join(", ") || "none"}${calls === undefined ? "" : ` · the server was asked ${calls} times`}`,
  );
  await app.close();
  await stores.close();

  // A fresh app over the same journal: the run is recorded, so resuming it asks the model nothing.
  const again = await fsStores({ dir });
  const second = createApp(defineConfig({ stores: again, effects, logics: [researcher] }));
  const before = server?.requests.length ?? 0;
  await second.resume("research-1");
  const replayed = (await second.result("research-1")) as AgentLoopOutput;
  console.log(
    `  resumed in a fresh app: same answer ${replayed.text === out.text ? "✓" : "✗"} · server calls ${(server?.requests.length ?? 0) - before} ✓`,
  );
  await second.close();
  await again.close();
} finally {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
}
