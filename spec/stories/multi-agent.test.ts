// The story `npm run story multi-agent`, as a user runs it: real processes, SIGKILLed at three points of a tree of
// agents (researchers mid-call, one finished but undelivered, mid-handoff) and resumed by a fresh process each time:
// no recorded model or tool call of any agent runs again, and the answer is the uninterrupted run's.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("story: multi-agent", () => {
  it("resumes the tree after each SIGKILL to the uninterrupted answer, re-running no recorded call", () => {
    const out = execFileSync(process.execPath, ["--import", "tsx", "stories/multi-agent.ts"], { encoding: "utf8" });
    expect(out).toContain("uninterrupted (in memory): 3 turns, answered by writer");
    const runs = out.split("SIGKILL with ").slice(1);
    expect(runs).toHaveLength(3);
    for (const run of runs) {
      expect(run).toContain("re-ran  no recorded model or tool call");
      expect(run).toContain("same answer as the uninterrupted run: yes");
      expect(run).toContain("usage   12 model calls, 4136 tokens for the tree");
      expect(run).toMatch(/run-1\/handoff +writer +done +1 model call, 650 tokens/);
      for (const j of [0, 1, 2]) expect(run).toMatch(new RegExp(`run-1/tool:0:${j} +researcher +done +3 model calls`));
      expect(run).toContain("answer  by writer: Barn owls hunt by ear.");
    }
    // Mid-handoff: only the writer's call in flight runs again.
    expect(runs[2]).toContain("ran     run-1/handoff writer#turn:0:model\n");
  }, 120_000);
});
