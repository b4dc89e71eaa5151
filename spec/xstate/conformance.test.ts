// The XState conformance harness over the vendored corpus (issue 33). It asserts that the harness works, not what
// loomwork does today: every machine is classified, none by a crash of the harness or an unclassified throw, the
// reference runs are valid, and a deliberately altered copy of a conforming machine is caught. The totals are printed.
import { describe, expect, it } from "vitest";
import { assign, createMachine } from "xstate";
import { CORPUS } from "./corpus/index.js";
import { CORPUS_COMMIT, FEATURES } from "./corpusTypes.js";
import { runCorpus, runMachine, totals, verdictDetail, type MachineResult } from "./harness.js";
import { counterMachine } from "./corpus/exampleApps.js";

describe("the XState conformance corpus", () => {
  it("holds at least 40 machines, each with a source path, its changes and known features", () => {
    const machines = new Set(CORPUS.map((c) => c.machine));
    expect(machines.size).toBeGreaterThanOrEqual(40);
    expect(new Set(CORPUS.map((c) => c.name)).size).toBe(CORPUS.length);
    for (const entry of CORPUS) {
      expect(entry.source).toMatch(/^(examples|packages\/core\/test)\//);
      expect(Array.isArray(entry.changes)).toBe(true);
      for (const f of entry.features) expect(FEATURES).toContain(f);
    }
    expect(CORPUS_COMMIT).toMatch(/^b1811bf77b/);
  });

  it("classifies every machine, with no unclassified throw and no invalid reference run, and prints the totals", async () => {
    const results: MachineResult[] = await runCorpus(CORPUS);
    expect(results.map((r) => r.name)).toEqual(CORPUS.map((c) => c.name));
    for (const r of results) {
      // The reference run (plain XState) reached every condition its entry waits on: the corpus itself is right.
      expect(r.verdict.kind, `${r.name}: ${verdictDetail(r.verdict)}`).not.toBe("invalid");
      // Nothing escaped the classification: a throw of loomwork's run is reported at a step, never as "the run".
      if (r.verdict.kind === "differs")
        expect(r.verdict.aspect, `${r.name}: ${verdictDetail(r.verdict)}`).not.toBe("thrown");
    }
    const t = totals(results);
    expect(t.same + t["refused at start"] + t.differs + t["differs after resume"]).toBe(CORPUS.length);
    console.log(
      `XState conformance over ${CORPUS.length} machines: ${t.same} same, ${t["refused at start"]} refused at start, ${t.differs} differ, ${t["differs after resume"]} differ after a resume`,
    );
  });
});

describe("the harness", () => {
  it("finds a machine known to conform the same on both runtimes, after a resume too", async () => {
    const r = await runMachine(CORPUS.find((c) => c.name === "counter")!);
    expect(r.verdict).toEqual({ kind: "same" });
    expect(r.comparisons).toBeGreaterThanOrEqual(5);
  });

  it("compares the two runs: a copy altered only on loomwork's side is caught as differs, at the step and aspect", async () => {
    // The same machine on both runtimes agrees; this one adds 2 instead of 1 once loomwork drives it. Each step
    // sends to XState's actor first, then to loomwork's: the assign's calls alternate between them.
    let calls = 0;
    const probe = createMachine({
      id: "probe",
      context: { count: 0 },
      on: {
        increment: {
          actions: [
            () => console.log("which"),
            assign({ count: ({ context }) => context.count + (++calls % 2 === 0 ? 2 : 1) }),
          ],
        },
      },
    });
    const realLog = console.log;
    const r = await runMachine({
      name: "altered-counter",
      source: "examples/counter/src/counterMachine.ts",
      machine: probe,
      steps: [{ send: { type: "increment" } }],
      changes: ["altered on purpose"],
      features: ["assign"],
    });
    expect(console.log).toBe(realLog);
    expect(r.verdict.kind).toBe("differs");
    expect(verdictDetail(r.verdict)).toMatch(/^step 1 \(send increment\): (context|actions)/);
  });

  it("reports a refusal at start with the error's name and message", async () => {
    const entry = CORPUS.find((c) => c.name === "workflow-greeting")!;
    const r = await runMachine({ ...entry, name: "greeting-unregistered", effects: {} });
    expect(r.verdict.kind).toBe("refused at start");
    if (r.verdict.kind === "refused at start") {
      expect(r.verdict.error.name).toMatch(/Error$/);
      expect(r.verdict.error.message).toContain("greetingFunction");
    }
  });

  it("judges a reference run that never reaches its condition invalid, not a finding", async () => {
    const r = await runMachine({
      name: "never",
      source: "examples/counter/src/counterMachine.ts",
      machine: counterMachine,
      steps: [{ send: { type: "increment" }, until: () => false, untilText: "never" }],
      changes: [],
      features: ["assign"],
    });
    expect(r.verdict.kind).toBe("invalid");
  });
});
