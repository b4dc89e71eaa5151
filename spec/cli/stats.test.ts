// `loomwork stats`: sizes per execution from the records alone, exact state with --logic, and warnings.
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { cli, makeJournal, type Journal } from "./support.js";

let journal: Journal;
beforeAll(async () => void (journal = await makeJournal()));
afterAll(() => rm(journal.dir, { recursive: true, force: true }));

describe("loomwork stats", () => {
  it("prints records, log bytes, state bytes, bytes on disk and envelopes per execution, with warnings", async () => {
    const { code, stdout } = await cli(["stats", "--dir", journal.dir]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^EXECUTION +STATUS +RECORDS +LOG +STATE +ON DISK +REFS$/m);
    expect(stdout).toMatch(/^bulk-export +done +11 +[\d.]+ KiB +— +[\d.]+ KiB +1$/m);
    expect(stdout).toMatch(/^research-done +done +29 +[\d.]+ KiB +— /m);
    expect(stdout).toMatch(/^total +\d+ +[\d.]+ KiB/m);
    expect(stdout).toContain("STATE is read from each execution's snapshot");
    expect(stdout).toMatch(
      /LOOM_LARGE_STEP_OUTPUT bulk-export: 1 output of effect "dumpRows" over 16\.0 KiB .* consider execution\.claimCheck/,
    );
    expect(stdout).toMatch(/LOOM_UNFINISHED research-unfinished: running but no process is writing this journal/);
  });

  it("does not say no process writes the journal while an app holds its writer lock", async () => {
    const stores = await fsStores({ dir: journal.dir });
    try {
      const { code, stdout, stderr } = await cli(["stats", "--dir", journal.dir]);
      expect(code, stderr).toBe(0);
      expect(stdout).toMatch(/^research-unfinished +running /m);
      expect(stdout).not.toContain("LOOM_UNFINISHED");
    } finally {
      await stores.close();
    }
  });

  it("measures the folded state at the head by replaying in memory with --logic, as app.stats does", async () => {
    const { code, stdout, stderr } = await cli([
      "stats",
      "research-done",
      "--dir",
      journal.dir,
      "--logic",
      "stories/support/researchAgent.ts",
      "--json",
    ]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const { executions, totals } = JSON.parse(stdout);
    expect(executions).toHaveLength(1);
    expect(executions[0]).toMatchObject({
      executionId: "research-done",
      records: 29,
      stateSource: "replay",
      stateSeq: 29,
      stateBytes: journal.researchStateBytes,
    });
    expect(executions[0].logBytes).toBeGreaterThan(executions[0].stateBytes / 2);
    expect(totals).toMatchObject({ executions: 1, records: 29 });
  });

  it("returns JSON for scripts: every execution, totals and the warnings with their facts", async () => {
    const { code, stdout } = await cli(["stats", "--dir", journal.dir, "--json"]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.executions.map((e: { executionId: string }) => e.executionId).sort()).toEqual([
      "bulk-export",
      "research-done",
      "research-unfinished",
    ]);
    expect(report.executions.find((e: { executionId: string }) => e.executionId === "bulk-export")).toMatchObject({
      refs: 1,
      stateBytes: null,
      stateSource: null,
    });
    expect(report.warnings).toContainEqual(
      expect.objectContaining({
        code: "LOOM_LARGE_STEP_OUTPUT",
        executionId: "bulk-export",
        effectId: "dumpRows",
        count: 1,
      }),
    );
    expect(report.totals.logBytes).toBe(
      report.executions.reduce((n: number, e: { logBytes: number }) => n + e.logBytes, 0),
    );
    // One execution's state is unknown without --logic or a snapshot: the total says so, it is not a partial sum.
    const measured = report.executions.filter((e: { stateBytes: number | null }) => e.stateBytes !== null).length;
    expect(report.totals).toMatchObject({ stateBytes: null, stateMeasured: measured });
    expect(measured).toBeLessThan(report.executions.length);
  });

  it("refuses a --logic module without machines (2), and a machine that does not replay the journal (1)", async () => {
    const none = await cli([
      "stats",
      "research-done",
      "--dir",
      journal.dir,
      "--logic",
      "stories/support/desktopAssistant.ts#nothing",
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("exports no XState machine named nothing");
    // The same id with another tool set: the journal's fetchPage step has no pending step to complete.
    const edited = join(journal.dir, "..", `edited-${process.pid}.ts`);
    await writeFile(
      edited,
      `import { agentLoop$ } from ${JSON.stringify(pathToFileURL(join(process.cwd(), "index.ts")).href)};\nexport const researcher = agentLoop$({ id: "researcher", model: "model", tools: ["search"] });\n`,
    );
    try {
      const diverged = await cli(["stats", "research-done", "--dir", journal.dir, "--logic", edited]);
      expect(diverged.code).toBe(1);
      expect(diverged.stderr).toMatch(/the logic "researcher" does not replay execution "research-done": .*seq \d+/);
    } finally {
      await rm(edited, { force: true });
    }
  });

  it("says so when --logic has no machine for an execution", async () => {
    const { code, stdout } = await cli([
      "stats",
      "research-done",
      "--dir",
      journal.dir,
      "--logic",
      "stories/support/desktopAssistant.ts",
    ]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/LOOM_LOGIC_MISSING research-done: --logic exports no machine "researcher"/);
  });
});
