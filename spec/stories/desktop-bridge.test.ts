// The desktop-bridge story as a user runs it: the main process owns the journal, a renderer thread shows
// it over a MessagePort, is closed mid-run, a second one reconnects and approves a tool call. The printed
// account is checked, then the journal: every record was written by the main process, the approval once.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { EVENT_RECEIVED, STEP_COMPLETED } from "../../index.js";

const run = promisify(execFile);

describe("story: desktop-bridge", () => {
  let dir: string;
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("a window closed mid-run, a new one reconnects and approves; the main process journals everything", async () => {
    dir = await mkdtemp(join(tmpdir(), "loomwork-desktop-bridge-"));
    const { stdout } = await run(process.execPath, ["--import", "tsx", "stories/desktop-bridge.ts", "--dir", dir], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
    });
    expect(stdout).toContain("[main] journal");
    expect(stdout).toMatch(
      /\[ui 1\] tidy-inbox +running, 1 steps, waiting for approval: archive\(\{"name":"billing\.eml"\}\)/,
    );
    expect(stdout).toMatch(/\[main\] window 1 closed mid-run \(digest-inbox at turn [1-9], active\)/);
    expect(stdout).toMatch(/\[ui 2\] tidy-inbox +running, 1 steps, waiting for approval/); // the state, after the reconnect
    expect(stdout).toContain("[ui 2] a USER_MESSAGE was refused by the main process: LOOM_BRIDGE_SEND");
    expect(stdout).toContain("[ui 2] approval journaled by the main process");
    expect(stdout).toMatch(/\[ui 2\] digest-inbox +is done: Inbox: 3 items/);
    expect(stdout).toContain(
      '[main] tidy-inbox done: "Archived billing.eml."; archive ran 1 time(s), after the approval',
    );
    expect(stdout).not.toMatch(/\[ui 1\].*approval journaled/);

    const stores = await fsStores({ dir });
    try {
      const tidy = await stores.events.read("tidy-inbox");
      const approvals = tidy.filter((r) => r.type === EVENT_RECEIVED);
      expect(approvals.map((r) => r.event)).toEqual([
        { type: "TOOL_APPROVAL", toolCallId: "call_archive", approved: true },
      ]);
      const archive = tidy.filter((r) => r.type === STEP_COMPLETED && r.effectId === "archive");
      expect(archive).toHaveLength(1);
      expect(archive[0]!.seq).toBeGreaterThan(approvals[0]!.seq);
      expect((await stores.events.listExecutions()).map((e) => [e.executionId, e.status]).sort()).toEqual([
        ["digest-inbox", "done"],
        ["tidy-inbox", "done"],
      ]);
    } finally {
      await stores.close();
    }
  }, 120_000);
});
