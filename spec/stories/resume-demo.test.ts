// The story `npm start` runs, as a user runs it: a real process, its printed account checked.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("story: resume-demo", () => {
  it("resumes in a fresh app, serving recorded steps from the log and re-running only the one in flight", () => {
    const out = execFileSync(process.execPath, ["--import", "tsx", "stories/resume-demo.ts"], { encoding: "utf8" });
    expect(out).toMatch(/first app: ran 3 effects .* then died with one call in flight/);
    expect(out).toMatch(
      /fresh app: replayed \d+ records, served 2 steps from the log, ran 2 \(researcher#search:3, researcher#summarize:1\)/,
    );
    expect(out).toContain(
      'output:    ["a finding about barn owls (search:1)","a finding about barn owls (search:2)","a finding about barn owls (search:3)","summary of 3 notes"]',
    );
    expect(out).toMatch(/sizes: +log 11 records, \d+ bytes; folded state \d+ bytes/);
  });
});
