// The mcp-agent story as a user runs it: an agent whose tools come from a real MCP server process (stdio),
// SIGKILLed mid-run and resumed by a second process that lists no tools and repeats no call. The printed
// account is checked, then the server's own request log and the journal.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { STEP_COMPLETED, STEP_FAILED } from "../../index.js";

const run = promisify(execFile);

describe("story: mcp-agent", () => {
  let dir: string;
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("resumes an agent with MCP tools in a second process without a second tools/list or a repeated call", async () => {
    dir = await mkdtemp(join(tmpdir(), "loomwork-mcp-agent-"));
    const { stdout } = await run(process.execPath, ["--import", "tsx", "stories/mcp-agent.ts", "--dir", dir], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
    });
    expect(stdout).toMatch(/process 1 \(pid \d+\) starts execution mcp-research-1\b/);
    expect(stdout).toMatch(/✗ SIGKILL right after turn 2 was journaled \(seq \d+\)/);
    expect(stdout).toContain(
      "its MCP server process was asked: initialize 1 · tools/list 1 · tools/call 3 (search, fetchPage, fetchPage)",
    );
    expect(stdout).toMatch(/replayed +\d+ records; 5 steps served from the log/);
    expect(stdout).toContain(
      "its MCP server process was asked: initialize 1 · tools/list 0 · tools/call 2 (search, fetchPage)",
    );
    expect(stdout).toContain("repeated   0 MCP calls made twice ✓");
    expect(stdout).toContain("Barn owls hunt by ear.");
    // The taint of the MCP results, in the answer's footer.
    expect(stdout).toMatch(/5 turns · tainted input seen from: mcp:almanac · \d+ tokens/);

    // The server's own log: two server processes, one tools/list in all, no call made twice.
    const requests = (await readFile(join(dir, "mcp-research-1.almanac-requests.jsonl"), "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { pid: number; method: string; tool?: string; arguments?: unknown });
    expect(new Set(requests.map((r) => r.pid)).size).toBe(2);
    expect(requests.filter((r) => r.method === "tools/list")).toHaveLength(1);
    const calls = requests.filter((r) => r.method === "tools/call").map((r) => JSON.stringify([r.tool, r.arguments]));
    expect(calls).toHaveLength(5);
    expect(new Set(calls).size).toBe(5);

    // The journal agrees: one outcome per step, the execution done.
    const stores = await fsStores({ dir });
    try {
      const records = await stores.events.read("mcp-research-1");
      const outcomes = records
        .filter((r) => r.type === STEP_COMPLETED || r.type === STEP_FAILED)
        .map((r) => r.stepId as string);
      expect(new Set(outcomes).size).toBe(outcomes.length);
      expect((await stores.events.getExecution("mcp-research-1"))?.status).toBe("done");
    } finally {
      await stores.close();
    }
  }, 120_000);
});
