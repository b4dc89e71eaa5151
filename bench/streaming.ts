// Measurement: streaming. Time to the first text delta through loomwork (app.start -> the model step ->
// fromAiSdk -> doStream -> the bus) beside the bare provider stream (doStream read directly), on the same
// loopback OpenAI-compatible server, interleaved in the same run; and the bytes one streamed turn adds to
// the journal beside the bytes of its final reply.
import { createLlmEffect } from "../actors/agents/model.js";
import { agentLoop$ } from "../actors/agents/agentLoop.js";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { fromAiSdk } from "../adapters/ai-sdk/index.js";
import { utf8Length } from "../stores/bytes.js";
import { memoryStores } from "../stores/memory.js";
import { byTurn, startOpenAiServer } from "../spec/support/openaiServer.js";
import { PROVIDERS } from "../spec/support/providers.js";
import { interleave, ratioOf, span, type Sample } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { ratios, type Section } from "./report.js";

const GOAL = 1.1;
const TEXT = "Barn owls hunt by ear: in total darkness they strike within a degree of a rustling mouse. ".repeat(8);

export async function measureStreaming(options: BenchOptions): Promise<Section> {
  const server = await startOpenAiServer(byTurn([{ text: TEXT, chunkChars: 16 }]));
  const provider = PROVIDERS[2]!; // @ai-sdk/openai-compatible 3.x, LanguageModel v4
  let n = 0;
  const journal = { turnBytes: 0, replyBytes: 0, deltas: 0 };
  // Defined once, as an app defines its agent: what is timed is a turn, not building the machine.
  const agent = agentLoop$({ id: "bench", model: "model" });
  try {
    const bare = async (): Promise<Sample> => {
      const model = provider.model(server.baseURL);
      const end = span();
      const { stream } = await model.doStream({ prompt: [{ role: "user", content: [{ type: "text", text: "How do barn owls hunt?" }] }] });
      const reader = stream.getReader();
      let first: Sample | undefined;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!first && value.type === "text-delta") first = end();
      }
      return first!;
    };
    const loomwork = async (): Promise<Sample> => {
      const stores = memoryStores();
      const app = createApp(defineConfig({ stores, effects: { model: createLlmEffect(fromAiSdk(provider.model(server.baseURL))) } }));
      const id = `s-${n++}`;
      let first: Sample | undefined;
      let deltas = 0;
      const end = span();
      app.on("delta", ({ delta }) => {
        if (delta.type !== "text-delta") return;
        deltas++;
        first ??= end();
      });
      await app.start(agent, { executionId: id, input: { prompt: "How do barn owls hunt?" } });
      await app.result(id);
      const log = await stores.events.read(id);
      const step = log.find((r) => r.type === "loom.step.completed");
      journal.turnBytes = utf8Length(JSON.stringify(step));
      journal.replyBytes = utf8Length(JSON.stringify(step?.output));
      journal.deltas = deltas;
      await app.close();
      return first!;
    };
    const samples = await interleave({ bare, loomwork }, { reps: options.inProcessReps, warmup: options.warmup });
    const r = ratioOf(samples.loomwork!, samples.bare!);
    return {
      id: "streaming",
      title: "Streaming: time to first delta, journaled bytes per streamed turn",
      method: [
        `One model turn of ${TEXT.length} characters streamed in 16-character SSE chunks by the loopback OpenAI-compatible server (spec/support/openaiServer.ts) through \`${provider.name}\` (LanguageModel ${provider.spec}).`,
        "**bare**: `doStream` called directly, timed to its first `text-delta` part. **loomwork**: `app.start` of an agent loop on the memory store, timed to the first `text-delta` on the bus (the journaled start, the model step through the effect chain, `fromAiSdk`, `doStream`). Interleaved, medians compared.",
      ],
      tables: [
        { head: ["variant", "time to first delta vs bare"], rows: [["bare provider stream", "1.00x"], ["through loomwork", ratios(r)]] },
        {
          caption: "What one streamed turn adds to the journal",
          head: ["deltas streamed", "journaled deltas", "STEP_COMPLETED record bytes", "of which the reply (output) bytes"],
          rows: [[String(journal.deltas), "0", String(journal.turnBytes), String(journal.replyBytes)]],
        },
      ],
      goals: [
        { goal: `time to first delta within ${GOAL}x of the bare provider stream`, met: r.wall <= GOAL, detail: ratios(r) },
        { goal: "journaled bytes per streamed turn: the final reply's, no delta", met: journal.deltas > 1 && journal.turnBytes - journal.replyBytes < 200, detail: `${journal.turnBytes} B record, ${journal.replyBytes} B reply, ${journal.deltas} deltas streamed, 0 journaled` },
      ],
      notes: ["The record's bytes beyond the reply are its envelope (type, seq, step and effect ids, time, usage), the same as for a turn that is not streamed."],
      raw: { samples },
    };
  } finally {
    await server.close();
  }
}
