// The story `npm start` runs, as a user runs it: a real process that kills a real child process mid-run
// and resumes the execution in a second one. The printed account is checked, then the journal itself.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { STEP_COMPLETED, STEP_FAILED } from "../../index.js";

const run = promisify(execFile);

describe("story: research-agent", () => {
  let dir: string;
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("is killed with SIGKILL mid-run and resumed by a second process that re-runs no recorded turn", async () => {
    dir = await mkdtemp(join(tmpdir(), "loomwork-research-"));
    const { stdout } = await run(process.execPath, ["--import", "tsx", "stories/research-agent.ts", "--dir", dir], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
    });
    expect(stdout).not.toContain("\u001b["); // no colour off a TTY
    expect(stdout).toMatch(/process 1 \(pid \d+\) starts execution (research-1)\b/);
    expect(stdout).toMatch(/✗ SIGKILL right after turn 2 was journaled \(seq \d+\)/);
    expect(stdout).toMatch(/process 2 \(pid \d+\) opens .* and resumes research-\w+/);
    const served = /served +(\d+) steps from the log: 2 model calls, (\d+) tool calls/.exec(stdout);
    expect(served).not.toBeNull();
    expect(stdout).toMatch(/ran +4 model calls, \d+ tool calls in this process/);
    expect(stdout).toContain("re-ran     0 recorded steps ✓");
    expect(stdout).toContain("Barn owls hunt by ear.");
    expect(stdout).toMatch(/6 turns · tainted input seen from: web · \d+ tokens/);
    expect(stdout).toMatch(/log +\d+ records, [\d.]+ KiB of JSON/);
    expect(stdout).toMatch(/state +[\d.]+ KiB folded state at the head/);
    expect(stdout).toMatch(/on disk +[\d.]+ KiB in /);

    // The journal agrees: one outcome per step id, six model calls in all, the execution done.
    const executionId = /starts execution (research-\w+)/.exec(stdout)![1]!;
    const stores = await fsStores({ dir });
    try {
      const records = await stores.events.read(executionId);
      const outcomes = records
        .filter((r) => r.type === STEP_COMPLETED || r.type === STEP_FAILED)
        .map((r) => r.stepId as string);
      expect(new Set(outcomes).size).toBe(outcomes.length);
      expect(outcomes.filter((id) => id.endsWith(":model"))).toHaveLength(6);
      expect((await stores.events.getExecution(executionId))?.status).toBe("done");
    } finally {
      await stores.close();
    }
  });
});
