// Measurement 13: XState conformance (issue 33). Every machine of the vendored corpus (spec/xstate/corpus/: XState
// v5's own examples/ and packages/core/test/ machines) is run on plain XState and on loomwork with the same events,
// compared after each step, resumed in a fresh app and compared again (spec/xstate/harness.ts). The figures are
// computed from this run: a table per machine, the totals, and per XState feature how many of the machines using it
// behave as on XState. No goal is judged here: issue 33's goal is that every machine is `same`.
import { CORPUS } from "../spec/xstate/corpus/index.js";
import { FEATURES } from "../spec/xstate/corpusTypes.js";
import { runCorpus, totals, verdictDetail, VERDICT_KINDS, type MachineResult } from "../spec/xstate/harness.js";
import type { BenchOptions } from "./options.js";
import type { Section } from "./report.js";

/** Per feature: the machines that use it, and how they were classified. */
export function featureRows(
  results: readonly MachineResult[],
): { feature: string; machines: number; same: number; refused: number; differs: number; differsAfterResume: number }[] {
  return FEATURES.map((feature) => {
    const using = results.filter((r) => CORPUS.find((c) => c.name === r.name)?.features.includes(feature));
    const count = (kind: string) => using.filter((r) => r.verdict.kind === kind).length;
    return {
      feature,
      machines: using.length,
      same: count("same"),
      refused: count("refused at start"),
      differs: count("differs"),
      differsAfterResume: count("differs after resume"),
    };
  }).filter((row) => row.machines > 0);
}

export async function measureXStateConformance(_options: BenchOptions): Promise<Section> {
  // The same corpus in every mode: it runs in about a second, on a clock the harness moves.
  const results = await runCorpus(CORPUS);
  const t = totals(results);
  const distinct = new Set(CORPUS.map((c) => c.machine)).size;
  return {
    id: "xstateConformance",
    title: "13. XState conformance: XState's own examples and tests, on XState and on loomwork",
    method: [
      `${CORPUS.length} runs of ${distinct} machines vendored from statelyai/xstate (examples/ and packages/core/test/, commit b1811bf77b; spec/xstate/corpus/), each with the events its example or test sends. ` +
        "Each runs on plain XState (`createActor`) and on loomwork (`createApp` over memory stores, `app.start`, `actor.sendAsync`) on one clock the harness moves; after the start and each step it compares status (and error), state value, context, output, tags, what actions printed (console) and emitted events. " +
        "It then closes the app, resumes the execution in a fresh app over the same stores (`app.resume`), compares again and sends the remaining events. " +
        "`same`: no difference anywhere; `refused at start`: `app.start` threw; `differs`: the first difference before the resume; `differs after resume`: the first difference from the resume on.",
    ],
    tables: [
      {
        caption: "Totals",
        head: ["machines run", "same", "refused at start", "differs", "differs after resume", "invalid (corpus error)"],
        rows: [[results.length, t.same, t["refused at start"], t.differs, t["differs after resume"], t.invalid]],
      },
      {
        caption: "Per machine",
        head: ["machine", "source", "verdict", "where and what"],
        rows: results.map((r) => [r.name, r.source, r.verdict.kind, verdictDetail(r.verdict) || "—"]),
        align: ["l", "l", "l", "l"],
      },
      {
        caption: "Per XState feature (machines using it)",
        head: ["feature", "machines", "same", "refused at start", "differs", "differs after resume"],
        rows: featureRows(results).map((r) => [
          r.feature,
          r.machines,
          r.same,
          r.refused,
          r.differs,
          r.differsAfterResume,
        ]),
      },
    ],
    goals: [],
    notes: [
      `Verdict kinds: ${VERDICT_KINDS.join(", ")}. "invalid" means plain XState itself did not reach a condition the entry waits on: a corpus error, asserted absent by spec/xstate/conformance.test.ts.`,
      "A machine is counted under every feature it uses, so a feature's row says how many of the machines that use it behave as on XState, not that the feature is the cause.",
    ],
    raw: results,
  };
}
