// `npm run bench -- --quick` in CI: every measurement still runs and renders its tables. No timing is
// asserted (the figures live in docs/performance.md, written by a full `npm run bench`).
import { describe, expect, it } from "vitest";
import { MEASUREMENTS, runBench } from "../../bench/suite.js";

describe("npm run bench -- --quick", () => {
  it("runs every measurement and renders the tables and the goals", async () => {
    const run = await runBench({ mode: "quick", command: "npm run bench -- --quick" });
    expect(run.sections.map((s) => s.id)).toEqual(MEASUREMENTS.map((m) => m.id));
    for (const section of run.sections) {
      expect(section.error, `${section.id} threw`).toBeUndefined();
      expect(section.tables.length, `${section.id} has tables`).toBeGreaterThan(0);
      for (const table of section.tables) {
        expect(table.rows.length, `${section.id}: ${table.caption ?? table.head.join(", ")}`).toBeGreaterThan(0);
        for (const row of table.rows) expect(row).toHaveLength(table.head.length);
      }
    }
    expect(run.markdown).toContain("# Performance");
    expect(run.markdown).toContain("## Goals (issue 9)");
    for (const key of ["os", "cpu", "cores", "memory", "node", "date", "command"])
      expect(run.markdown).toContain(`| ${key} |`);
    expect(run.markdown).toMatch(/\| 4 \| off \| \d+ \| [\d,]+ B \([\d.]+ KB\)/);
  }, 240_000);
});
