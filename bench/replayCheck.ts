// Measurement 8: `checkReplay(app, logic)` over stored executions on fs (issue 16): N executions of a flow, half
// of them past the branch an incompatible change (a review step) alters. The check must report exactly
// those, with their seq; its time per execution is set beside a plain resume's (the same executions,
// resumed one by one in a fresh app over the same directory); and its heap must not grow with N (one
// log in memory at a time): the peak heap growth during the check is sampled at every result.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { assign, setup } from "xstate";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { createToolEffect } from "../actors/effects/effect.js";
import { fsStores } from "../adapters/fs/index.js";
import { effectActor } from "../machines/helpers/effectActor.js";
import type { BenchOptions } from "./options.js";
import { bytes, type Goal, type Section } from "./report.js";
import { tempDir } from "./stores.js";
import { checkReplay } from "../upgrades.js";

function flow(review: boolean) {
  return setup({
    types: {} as { context: { trail: string[] } },
    actors: { work: effectActor<string, string>() },
  }).createMachine({
    id: "bench-flow",
    context: { trail: [] },
    initial: "preparing",
    states: {
      preparing: {
        invoke: {
          src: "work",
          id: "prepare",
          input: "prepare",
          onDone: {
            target: "waiting",
            actions: assign({ trail: ({ context, event }) => [...context.trail, event.output] }),
          },
        },
      },
      waiting: { on: { CONTINUE: review ? "reviewing" : "finishing" } },
      reviewing: { invoke: { src: "work", id: "review", input: "review", onDone: "finishing" } },
      finishing: {
        invoke: {
          src: "work",
          id: "finish",
          input: "finish",
          onDone: {
            target: "closing",
            actions: assign({ trail: ({ context, event }) => [...context.trail, event.output] }),
          },
        },
      },
      closing: { on: { CLOSE: "done" } },
      done: { type: "final" },
    },
  });
}

// A full GC in-process (the bench runs under tsx, without --expose-gc): retained heap, not garbage, is what is bounded.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const retained = () => (gc(), process.memoryUsage().heapUsed);

const effects = { work: createToolEffect(async (input: string) => `done:${input}`) };

interface Row {
  executions: number;
  diverged: number;
  expected: number;
  seqs: string;
  checkMsPer: number;
  resumeMsPer: number;
  heapGrowth: number;
}

async function measureScale(executions: number, resumeSample: number): Promise<Row> {
  const dir = await tempDir("replay-check");
  let stores = await fsStores({ dir });
  const writer = createApp(defineConfig({ stores, effects, execution: { snapshotEvery: false } }));
  for (let i = 0; i < executions; i++) {
    const actor = await writer.start(flow(false), { executionId: `run-${String(i).padStart(5, "0")}` });
    await actor.settled();
    if (i % 2 === 1) {
      await actor.sendAsync({ type: "CONTINUE" });
      await actor.settled();
    }
  }
  await writer.close();
  await stores.close();

  stores = await fsStores({ dir });
  const checker = createApp(defineConfig({ stores, effects }));
  // Timed on its own, then again with the retained heap sampled (after a full GC) 20 times during the check.
  const seqs = new Set<number>();
  const began = performance.now();
  const report = await checkReplay(checker, flow(true), {
    onResult: (r) => r.status === "diverges" && seqs.add(r.seq),
  });
  const checkMs = performance.now() - began;
  const every = Math.max(1, Math.floor(executions / 20));
  const start = retained();
  let peak = start;
  await checkReplay(checker, flow(true), {
    onResult: () => undefined,
    onProgress: ({ checked }) => void (checked % every === 0 && (peak = Math.max(peak, retained()))),
  });
  await checker.close();
  await stores.close();

  // A plain resume of the same kind of execution, one by one, each in a fresh app (what a deploy's resumes cost).
  stores = await fsStores({ dir });
  const sample = Math.min(resumeSample, executions);
  let resumeMs = 0;
  for (let i = 0; i < sample; i++) {
    const app = createApp(defineConfig({ stores, effects, logics: [flow(false)] }));
    const t = performance.now();
    await app.resume(`run-${String(i).padStart(5, "0")}`);
    resumeMs += performance.now() - t;
    await app.close();
  }
  await stores.close();
  return {
    executions,
    diverged: report.diverged,
    expected: Math.floor(executions / 2),
    seqs: [...seqs].join(", "),
    checkMsPer: checkMs / executions,
    resumeMsPer: resumeMs / sample,
    heapGrowth: peak - start,
  };
}

export async function measureReplayCheck(options: BenchOptions): Promise<Section> {
  const scales = options.mode === "quick" ? [10, 20] : [100, 1_000];
  const rows: Row[] = [];
  for (const n of scales) rows.push(await measureScale(n, options.mode === "quick" ? 5 : 100));
  const exact = rows.every((r) => r.diverged === r.expected);
  const [small, large] = [rows[0]!, rows.at(-1)!];
  // Bounded: what the check retains grows by at most one kept result per diverging execution (~1 KB), never by the logs.
  const bounded =
    large.heapGrowth <= Math.max(small.heapGrowth, 0) + (large.expected - small.expected) * 1024 + 1024 * 1024;
  const goals: Goal[] = [
    {
      goal: "replay-check reports exactly the executions that diverge, with their seq",
      met: exact,
      detail: rows.map((r) => `${r.diverged}/${r.expected} at seq ${r.seqs || "—"}`).join("; "),
    },
    {
      goal: "its memory stays bounded (heap growth does not scale with the executions checked)",
      met: bounded,
      detail: rows.map((r) => `${r.executions}: ${bytes(r.heapGrowth)}`).join(", "),
    },
  ];
  return {
    id: "replayCheck",
    title: "8. checkReplay(app, logic) over stored executions (fs)",
    method: [
      "N executions of an 8-record flow on fs, half of them past the branch that an incompatible change (a review step after CONTINUE) alters. " +
        "`checkReplay(app, changed)` in a fresh app over the directory, results streamed (`onResult`), the retained heap sampled 20 times during a second, untimed check (a full GC before each sample; peak − start). The report keeps only the diverging results, so it grows by those. " +
        "Beside it, a plain `app.resume` of the same executions, each in a fresh app, in-process.",
    ],
    tables: [
      {
        head: [
          "executions",
          "diverging reported / expected",
          "at seq",
          "check per execution",
          "plain resume per execution",
          "retained heap growth during the check (after GC)",
        ],
        rows: rows.map((r) => [
          r.executions,
          `${r.diverged} / ${r.expected}`,
          r.seqs || "—",
          `${r.checkMsPer.toFixed(3)} ms`,
          `${r.resumeMsPer.toFixed(3)} ms`,
          bytes(r.heapGrowth),
        ]),
      },
    ],
    goals,
    notes: [
      "A check reads each log from seq 1 (a snapshot is the old logic's fold) and folds it through the pure planner: no effect, no timer, no write, no writer lock per execution.",
    ],
  };
}
