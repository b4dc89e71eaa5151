// The desktop story as a user runs it: an app process quits gracefully mid-run, a new one resumes what the
// catalogue lists as unfinished. The printed account is checked, then the journal itself.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { STEP_COMPLETED, STEP_FAILED } from "../../index.js";

const run = promisify(execFile);

describe("story: desktop-embed", () => {
  let dir: string;
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("survives a graceful quit mid-run: the next launch resumes every unfinished execution", async () => {
    dir = await mkdtemp(join(tmpdir(), "loomwork-desktop-"));
    const { stdout } = await run(process.execPath, ["--import", "tsx", "stories/desktop-embed.ts", "--dir", dir], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
    });
    expect(stdout).toContain("[app] closed; 2 executions left unfinished in the journal: digest-inbox, digest-notes");
    expect(stdout).toContain("session 1 exited with code 0");
    expect(stdout).toContain("[app] 2 unfinished executions in the catalogue: digest-inbox, digest-notes; resuming");
    expect(stdout).toMatch(/digest-inbox: replayed \d+ records, served [1-9]\d* steps from the log/);
    expect(stdout).toMatch(/\[ui\] +digest-notes +done +turn 3/);
    expect(stdout).toContain("• Offsite moved to Thursday (Ana)");
    expect(stdout).toContain("• Talk ideas");
    expect(stdout).toContain("2 executions finished after the restart; re-ran 0 recorded steps ✓");

    const stores = await fsStores({ dir });
    try {
      for (const info of await stores.events.listExecutions()) {
        expect(info.status).toBe("done");
        const outcomes = (await stores.events.read(info.executionId))
          .filter((r) => r.type === STEP_COMPLETED || r.type === STEP_FAILED)
          .map((r) => r.stepId);
        expect(new Set(outcomes).size).toBe(outcomes.length);
      }
    } finally {
      await stores.close();
    }
  });
});
