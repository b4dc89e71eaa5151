// The real-model story as a user runs it: a real provider client against the loopback server, the answer
// streamed to the terminal, and a resume in a fresh app that asks the server nothing.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("story: real-model", () => {
  it("streams the research agent's answer through @ai-sdk/openai-compatible, and a resume calls the server 0 times", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
    delete env.LOOMWORK_BASE_URL;
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "stories/real-model.ts"], {
      encoding: "utf8",
      env,
    });
    expect(stderr).toBe("");
    expect(stdout).toMatch(/through @ai-sdk\/openai-compatible \(LanguageModel v4\) at http:\/\/127\.0\.0\.1:\d+\/v1/);
    expect(stdout).toContain('tool    search({"query":"barn owl hunting in darkness"})');
    expect(stdout).toContain("answer  Barn owls hunt by ear [1]");
    expect(stdout).toMatch(/3 turns · \d+ tokens · tainted input from: web · the server was asked 3 times/);
    expect(stdout).toContain("resumed in a fresh app: same answer ✓ · server calls 0 ✓");
  });
});
