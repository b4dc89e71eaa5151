// Sub-agents and a handoff on a real AI SDK provider against the loopback server, on the filesystem journal, with the
// process SIGKILLed at several points of the tree (issue 34, "Crashes"): a researcher mid-model-call while another is
// mid-tool; a researcher finished but its answer not yet delivered; mid-handoff. A fresh process resumes the tree: no
// model or tool call with a recorded outcome runs again, and the answer is the uninterrupted run's.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { linesOf, removeTempDirs, runChild, tempDir } from "../reliability/support.js";
import { agentOf, questionOf, treeReply, TREE_ANSWER } from "../support/agentTree.js";
import { startOpenAiServer, type OpenAiServer, type ServerRequest } from "../support/openaiServer.js";

const CHILD = fileURLToPath(new URL("./children/treeProcess.ts", import.meta.url));

let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(removeTempDirs);

const child = (args: object) =>
  spawn(process.execPath, ["--import", "tsx", CHILD, JSON.stringify(args)], { stdio: ["ignore", "pipe", "pipe"] });

const POINTS = [
  {
    what: "a researcher mid-model-call while the other is mid-tool",
    // The owls researcher's answer stream is held open; the bats search hangs.
    hold: (r: ServerRequest) =>
      agentOf(r) === "researcher" && r.body.messages.some((m) => m.role === "tool") && questionOf(r) === "owls",
    slow: "bats",
    killWhen: (seen: string[], held: boolean) => held && seen.some((l) => /^tool run\/tool:0:1 /.test(l)),
    // What had no outcome: the owls researcher's answer, the bats search; then the rest of the tree.
    ran: (calls: string[]) =>
      expect(calls).toEqual(
        expect.arrayContaining(["run/tool:0:0 researcher#turn:1:model", "run/tool:0:1 researcher#turn:0:tool:0"]),
      ),
  },
  {
    what: "a researcher finished, its answer not yet delivered",
    hold: () => false,
    slow: "bats",
    killWhen: (seen: string[]) => seen.includes("ended run/tool:0:0"),
    // The owls researcher ended: none of its calls runs again; the bats search does.
    ran: (calls: string[]) => {
      expect(calls.filter((c) => c.startsWith("run/tool:0:0 "))).toEqual([]);
      expect(calls).toContain("run/tool:0:1 researcher#turn:0:tool:0");
    },
  },
  {
    what: "mid-handoff: the writer's answer in flight",
    hold: (r: ServerRequest) => agentOf(r) === "writer",
    slow: undefined,
    killWhen: (_seen: string[], held: boolean) => held,
    ran: (calls: string[]) => expect(calls).toEqual(["run/handoff writer#turn:0:model"]),
  },
];

describe("a tree of agents on a real provider, SIGKILLed and resumed (fs)", () => {
  for (const point of POINTS)
    it(`resumes after a SIGKILL with ${point.what}: no recorded call runs again, the same answer`, async () => {
      let holding = false;
      const heldOnce = new Set<string>();
      server = await startOpenAiServer((request) => {
        const turn = treeReply(request);
        const key = JSON.stringify(request.body.messages);
        if (!("status" in turn) && point.hold(request) && !heldOnce.has(key)) {
          heldOnce.add(key);
          holding = true;
          return { ...turn, holdAfterChunks: 1 };
        }
        return turn;
      });
      const dir = await tempDir("tree-crash");
      const args = { dir, baseURL: server.baseURL, slow: point.slow };
      // Killed once the point is reached: on a line of the child's, or on the server's hold, whichever comes last.
      const seen: string[] = [];
      const proc = child({ ...args, mode: "start" });
      let pending = "";
      proc.stdout!.on("data", (chunk: Buffer | string) => {
        const split = (pending + String(chunk)).split("\n");
        pending = split.pop()!;
        seen.push(...split);
      });
      const running = runChild(proc, { timeoutMs: 60_000 });
      const deadline = Date.now() + 50_000;
      while (!point.killWhen(seen, holding)) {
        if (Date.now() > deadline) throw new Error(`never reached: ${point.what}; saw ${seen.join(" | ")}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      proc.kill("SIGKILL");
      const first = await running;
      expect(first.code, first.stderr).toBeNull();
      expect(linesOf(first.stdout, "result")).toEqual([]);

      const second = await runChild(child({ ...args, mode: "resume" }), { timeoutMs: 60_000 });
      expect(second.stderr).toBe("");
      expect(second.code).toBe(0);
      const recorded = new Set(linesOf(second.stdout, "recorded"));
      const ran = [...linesOf(second.stdout, "model"), ...linesOf(second.stdout, "tool")];
      expect(ran.length).toBeGreaterThan(0);
      expect(ran.filter((call) => recorded.has(call))).toEqual([]);
      point.ran(ran);
      expect(JSON.parse(linesOf(second.stdout, "result")[0]!)).toMatchObject({
        text: TREE_ANSWER,
        lastAgent: "writer",
      });
    }, 120_000);
});
