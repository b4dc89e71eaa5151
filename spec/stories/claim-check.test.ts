// The claim-check story as a user runs it: a real process, its printed account checked.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("story: claim-check", () => {
  it("shows less state with the opt-in and a resume with zero content-store calls", () => {
    const out = execFileSync(process.execPath, ["--import", "tsx", "stories/claim-check.ts"], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
    });
    const state = (label: string) => Number(new RegExp(`${label}: +folded state ([\\d.]+) KiB`).exec(out)?.[1]);
    expect(state("claim-check off")).toBeGreaterThan(4 * state("claim-check on"));
    expect(out).toMatch(
      /resumed in a fresh app: \d+ records replayed, 0 content-store calls, 0 model or tool calls re-run/,
    );
    expect(out).toContain("the 39 offloaded exports stay in the content store");
  });
});
