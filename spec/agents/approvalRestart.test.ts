// Approval across a real process restart: a process parks the agent in awaitingApproval and is SIGKILLed;
// a fresh process finds the pending approval in the read models, approves it, and the run finishes. The
// recorded model turn is not asked again; the approved tool runs once, in the second process.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { removeTempDirs, runChild, tempDir } from "../reliability/support.js";
import { byTurn, startOpenAiServer, type OpenAiServer } from "../support/openaiServer.js";

const CHILD = fileURLToPath(new URL("./children/approvalProcess.ts", import.meta.url));
const child = (args: object) =>
  spawn(process.execPath, ["--import", "tsx", CHILD, JSON.stringify(args)], { stdio: ["ignore", "pipe", "pipe"] });
const line = (stdout: string, prefix: string) =>
  stdout
    .split("\n")
    .find((l) => l.startsWith(`${prefix} `))
    ?.slice(prefix.length + 1);

let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(removeTempDirs);

describe("approval across a process restart", () => {
  it("parks, is killed, is approved in a fresh process, and finishes", async () => {
    server = await startOpenAiServer(
      byTurn([
        { toolCalls: [{ id: "call_mail", name: "sendEmail", arguments: '{"to":"ada@example.org"}' }] },
        { text: "Sent." },
      ]),
    );
    const dir = await tempDir("approval");
    const first = await runChild(child({ dir, baseURL: server.baseURL, mode: "start" }), {
      killWhen: (l) => l.startsWith("parked "),
      timeoutMs: 60_000,
    });
    expect(first.code).toBeNull();
    expect(JSON.parse(line(first.stdout, "parked")!)).toEqual([
      { toolCallId: "call_mail", toolName: "sendEmail", input: { to: "ada@example.org" }, stepId: "mail#turn:0:model" },
    ]);
    expect(first.stdout).not.toContain("tool sendEmail");

    const second = await runChild(child({ dir, baseURL: server.baseURL, mode: "approve", toolCallId: "call_mail" }), {
      timeoutMs: 60_000,
    });
    expect(second.stderr).toBe("");
    expect(JSON.parse(line(second.stdout, "resumed")!)).toMatchObject({
      state: "awaitingApproval",
      pending: [{ toolCallId: "call_mail" }],
    });
    expect(second.stdout.split("\n").filter((l) => l.startsWith("tool sendEmail"))).toEqual([
      "tool sendEmail ada@example.org",
    ]);
    expect(JSON.parse(line(second.stdout, "result")!)).toMatchObject({ text: "Sent.", turns: 2 });
    expect(server.requests.map((r) => r.turn)).toEqual([0, 1]);
  }, 120_000);
});
