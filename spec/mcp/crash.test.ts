// SIGKILL of the process running an agent whose tools are a real MCP server's (stdio), mid-call, and a
// resume in a fresh process: the recorded call is served from the log (the server is not asked again), the
// pinned tool list means no second tools/list, and the call in flight runs once more.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs, runChild, tempDir } from "../reliability/support.js";

const CHILD = fileURLToPath(new URL("./children/agentProcess.ts", import.meta.url));
afterAll(removeTempDirs);

const child = (args: object) =>
  spawn(process.execPath, ["--import", "tsx", CHILD, JSON.stringify(args)], { stdio: ["ignore", "pipe", "pipe"] });
const requests = (log: string) => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("an MCP agent killed mid-call", () => {
  it("resumes in a fresh process without listing the tools again or repeating a recorded call", async () => {
    const dir = await tempDir("mcp-crash");
    const log = join(dir, "server.log");
    // The first process: search answers, measure is held; killed once the server holds the measure call.
    const first = child({ dir, log, hold: "measure", mode: "start" });
    const running = runChild(first, { timeoutMs: 60_000 });
    await until(() => requests(log).includes("tools/call measure"), 60_000);
    first.kill("SIGKILL");
    const killed = await running;
    expect(killed.stdout).not.toContain("result ");
    expect(requests(log).filter((r) => r !== "notifications/initialized")).toEqual([
      "initialize",
      "tools/list",
      "tools/call search",
      "tools/call measure",
    ]);

    const second = await runChild(child({ dir, log, mode: "resume" }), { timeoutMs: 60_000 });
    expect(second.code, second.stderr).toBe(0);
    const result = JSON.parse(
      second.stdout
        .split("\n")
        .find((l) => l.startsWith("result "))!
        .slice(7),
    ) as {
      text: string;
      sawTaintFrom: string[];
    };
    expect(result).toMatchObject({ text: "Barn owls hunt by sound; 95 cm.", sawTaintFrom: ["mcp:owls"] });
    // The resume: one connection, no tools/list, search served from the log, measure run once more.
    expect(requests(log).filter((r) => r !== "notifications/initialized")).toEqual([
      "initialize",
      "tools/list",
      "tools/call search",
      "tools/call measure",
      "initialize",
      "tools/call measure",
    ]);
    expect(second.stdout.split("\n").filter((l) => l.startsWith("step "))).toEqual(["step owl#turn:1:tool:0"]);
  }, 120_000);
});
