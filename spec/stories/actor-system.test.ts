// The story `npm run story actor-system`, as a user runs it: real processes, SIGKILLed at three points of a tree and
// resumed by a fresh process each time; its printed account checked.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("story: actor-system", () => {
  it("resumes the tree after each SIGKILL to the same output, running only what had no outcome", () => {
    const out = execFileSync(process.execPath, ["--import", "tsx", "stories/actor-system.ts"], { encoding: "utf8" });
    const runs = out.split("SIGKILL with ").slice(1);
    expect(runs).toHaveLength(3);
    for (const run of runs) {
      expect(run).toContain('output  {"picked":["lark","owl"],"label":"box of lark+owl"}');
      expect(run).toContain("tree    order-1, order-1/a, order-1/b, order-1/box");
      expect(run).toMatch(/messages PICKED x2 in order-1, ACK x1 in order-1\/a, ACK x1 in order-1\/b/);
    }
    // Both calls in flight: both run again. The owl's recorded: only the lark's and the packer's run.
    expect(runs[0]).toMatch(
      /ran {5}order-1\/a picker#pick:1, order-1\/b picker#pick:1, order-1\/box packer#pack:1|ran {5}order-1\/b picker#pick:1, order-1\/a picker#pick:1, order-1\/box packer#pack:1/,
    );
    // The owl's recorded pick is served when its execution is resumed; the kill (on the dispatcher's PICKED) may also
    // come after the owl took its ACK and ended, and an ended execution is not resumed: 1 or 0, never run again.
    expect(runs[1]).toMatch(/served [01] recorded step\(s\)/);
    expect(runs[1]).toContain("ran     order-1/b picker#pick:1, order-1/box packer#pack:1");
    expect(runs[2]).toContain("served 2 recorded step(s)");
    expect(runs[2]).toContain("ran     order-1/box packer#pack:1");
  }, 120_000);
});
