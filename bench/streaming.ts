// Measurement: streaming. Time to the first text delta through loomwork (app.start -> the model step ->
// fromAiSdk -> doStream -> the bus) beside the bare provider stream (doStream read directly), on the same
// loopback OpenAI-compatible server, interleaved in one fresh process (bench/child/streaming.ts); and the
// bytes one streamed turn adds to the journal beside the bytes of its final reply.
import type { StreamingArgs, StreamingReport } from "./child/streaming.js";
import { ratioOf } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { ratios, type Section } from "./report.js";
import { runChild } from "./spawn.js";

const GOAL = 1.1;

/**
 * Rounds of the comparison: a turn takes some 10-60 ms on the shared machine, and a 1.1x goal needs many of
 * them (15 rounds after 1 in the bench's own process gave 0.86x to 1.18x of the same code). The unrecorded
 * rounds let the JIT settle for both variants, as in a process that has run some turns.
 */
function argsOf(options: BenchOptions): StreamingArgs {
  return options.mode === "quick" ? { reps: 1, warmup: 0, phaseReps: 1 } : { reps: 201, warmup: 30, phaseReps: 31 };
}

/**
 * How much of what loomwork adds before the provider is called (its "doStream called" mark beyond the bare
 * stream's) precedes its first append, from the phase medians; empty when a mark is missing.
 */
function beforeCall(journaled: number | undefined, called: number | undefined, bareCalled: number | undefined): string {
  if (journaled === undefined || called === undefined || bareCalled === undefined || called <= bareCalled) return "";
  const added = called - bareCalled;
  const share = Math.min(1, journaled / added);
  return `${share > 0.5 ? "Most" : "Less than half"} of it (${Math.round(share * 100)}%: ${journaled.toFixed(2)} ms of ${added.toFixed(2)} ms in the phase table) precedes the first append ("the start's macrostep journaled"). `;
}

export async function measureStreaming(options: BenchOptions): Promise<Section> {
  const args = argsOf(options);
  const r0 = (await runChild("streaming", args)) as unknown as StreamingReport;
  const { samples, phases, journal } = r0;
  const r = ratioOf(samples.loomwork!, samples.bare!);
  const onThread = ratioOf(samples["loomwork, server on this thread"]!, samples["bare, server on this thread"]!);
  const ms = (v: number | undefined) => (v === undefined ? "" : `${v.toFixed(2)} ms`);
  const phaseRows: [string, string][] = [
    [
      "start journaled",
      "the start's macrostep journaled (loomwork: its first append event; the planner's first macrostep before it)",
    ],
    ["doStream called", "the provider's doStream called"],
    ["app.start resolved", "app.start resolved (loomwork)"],
    ["doStream resolved", "doStream resolved (the response's headers)"],
    ["first text-delta", "first text-delta (bare: read from the stream; loomwork: on the bus)"],
  ];
  return {
    id: "streaming",
    title: "Streaming: time to first delta, journaled bytes per streamed turn",
    method: [
      `One model turn of ${r0.textChars} characters streamed in 16-character SSE chunks by the loopback OpenAI-compatible server (spec/support/openaiServer.ts) through \`${r0.provider.name}\` (LanguageModel ${r0.provider.spec}), in a fresh process (\`bench/child/streaming.ts\`) that runs nothing else. The server runs in a process of its own (\`bench/child/openaiServer.ts\`), as a provider does; the same pair against the same server on the client's own thread is timed beside it, interleaved, for comparison.`,
      "**bare**: `doStream` called directly, timed to its first `text-delta` part. **loomwork**: `app.start` of an agent loop on the memory store, timed to the first `text-delta` on the bus (the journaled start, the model step through the effect chain, `fromAiSdk`, `doStream`). " +
        `Both build their provider client and (loomwork) app before the span. ${args.reps} interleaved rounds (the order alternates) after ${args.warmup} unrecorded ones, a full GC before each run; medians compared.`,
    ],
    tables: [
      {
        head: ["variant", "time to first delta vs bare"],
        rows: [
          ["bare provider stream (server in its own process)", "1.00x"],
          ["through loomwork (server in its own process)", ratios(r)],
          ["through loomwork, server on the client's thread (vs the bare stream against it)", ratios(onThread)],
        ],
      },
      {
        caption: `Where the time to the first delta goes: median time from the start of the span to each mark, over ${args.phaseReps} untimed runs of each variant after the timed ones (absolute times on this machine, for the breakdown only)`,
        head: ["mark", "bare", "loomwork"],
        rows: phaseRows.map(([name, label]) => [label, ms(phases.bare[name]), ms(phases.loomwork[name])]),
      },
      {
        caption: "What one streamed turn adds to the journal",
        head: [
          "deltas streamed",
          "journaled deltas",
          "STEP_COMPLETED record bytes",
          "of which the reply (output) bytes",
        ],
        rows: [[String(journal.deltas), "0", String(journal.turnBytes), String(journal.replyBytes)]],
      },
    ],
    goals: [
      {
        goal: `time to first delta within ${GOAL}x of the bare provider stream`,
        met: r.wall <= GOAL,
        detail: ratios(r),
      },
      {
        goal: "journaled bytes per streamed turn: the final reply's, no delta",
        met: journal.deltas > 1 && journal.turnBytes - journal.replyBytes < 200,
        detail: `${journal.turnBytes} B record, ${journal.replyBytes} B reply, ${journal.deltas} deltas streamed, 0 journaled`,
      },
    ],
    notes: [
      "What loomwork adds before the provider is called (\"doStream called\") is the journaled EXECUTION_STARTED and its transition (the step's intent: written before the call), the planner's first macrostep and the effect chain; after it, each delta goes through the step's sink and the bus. The rest is the provider's request and response, as in the bare stream.",
      beforeCall(
        phases.loomwork["start journaled"],
        phases.loomwork["doStream called"],
        phases.bare["doStream called"],
      ) +
        "Before the append: app.start's checks, the planner's first macrostep (XState's initial transition of the agent loop: its context, the model child it spawns) and the memory store's append (a structured clone of the records). After it: the effect chain's setup (the step's abort signal, the layers) and the model request, built when the step runs.",
      "A full GC runs before each round, after which V8 builds the first instance of each class (an Execution, an AbortController, an XState Actor, ...) the slow way; so the path builds few class instances before the call: one AbortController per step (the chain runs on the execution's own), the execution's actor and observers made at first use, no per-start walk of the definition (checked once per app).",
      `Why the goal's pair runs against a server in its own process: on the client's thread, the server's handling of the request and its writes of the first chunks queue behind whatever the client runs after the request has gone out (app.start resolving, the bus, the catalogue's announcement), which no remote provider does; there the same loomwork path measures ${ratios(onThread)} of its bare stream. Both pairs are interleaved in one process, against servers started from the same script.`,
      "The record's bytes beyond the reply are its envelope (type, seq, step and effect ids, time, usage), the same as for a turn that is not streamed.",
    ],
    raw: { samples, phases },
  };
}
