// SIGKILL mid-stream, resumed in a fresh process, on each specification version's real provider: the
// recorded turn calls the server 0 times, the in-flight turn once more, and no recorded tool runs again.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { removeTempDirs, runChild, tempDir } from "../reliability/support.js";
import { startOpenAiServer, type OpenAiServer, type ServerTurn } from "../support/openaiServer.js";
import { PROVIDERS } from "../support/providers.js";

const CHILD = fileURLToPath(new URL("./children/agentProcess.ts", import.meta.url));
const ANSWER = "Barn owls hunt by sound; their wingspan is about 95 cm.";
const TURNS: ServerTurn[] = [
  {
    toolCalls: [
      { id: "call_q", name: "search", arguments: '{"q":"barn owl hunting"}' },
      { id: "call_m", name: "measure", arguments: '{"bird":"barn owl"}' },
    ],
  },
  { text: ANSWER, chunkChars: 3 },
];

let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(removeTempDirs);

const child = (args: object) =>
  spawn(process.execPath, ["--import", "tsx", CHILD, JSON.stringify(args)], { stdio: ["ignore", "pipe", "pipe"] });
const lines = (stdout: string, prefix: string) =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith(`${prefix} `))
    .map((l) => l.slice(prefix.length + 1));

// One of each specification version: v2, v3, v4.
for (const index of [0, 1, 2]) {
  const provider = PROVIDERS[index]!;
  describe(`a crash mid-stream with ${provider.name} (LanguageModel ${provider.spec})`, () => {
    it("resumes in a fresh process: turn 0 is not asked again, turn 1 once more, no tool re-runs", async () => {
      let turnOne = 0;
      server = await startOpenAiServer((request) => {
        const turn = TURNS[request.turn] ?? { status: 500 };
        return request.turn === 1 && turnOne++ === 0 ? { ...turn, holdAfterChunks: 6 } : turn;
      });
      const dir = await tempDir("stream-crash");
      const args = { dir, baseURL: server.baseURL, provider: index };
      // Killed once it has printed live text of turn 1 (the server then holds the rest of that stream).
      const first = await runChild(child({ ...args, mode: "start" }), {
        killWhen: (l) => l.startsWith("part ") && l.includes('"text-delta"'),
        timeoutMs: 60_000,
      });
      expect(first.code).toBeNull();
      expect(lines(first.stdout, "result")).toEqual([]);
      expect(lines(first.stdout, "tool").sort()).toEqual(["measure", "search"]);
      expect(server.requests.map((r) => r.turn)).toEqual([0, 1]);

      const second = await runChild(child({ ...args, mode: "resume" }), { timeoutMs: 60_000 });
      expect(second.stderr).toBe("");
      expect(second.code).toBe(0);
      expect(JSON.parse(lines(second.stdout, "result")[0]!)).toMatchObject({ text: ANSWER, turns: 2 });
      expect(server.requests.map((r) => r.turn)).toEqual([0, 1, 1]);
      expect(lines(second.stdout, "tool")).toEqual([]);
      // The fresh process's stream: turn 0 from the journal, turn 1 live from its start.
      const parts = lines(second.stdout, "part").map(
        (l) => JSON.parse(l) as { stepId: string; type: string; delta?: string },
      );
      expect(parts.filter((p) => p.stepId === "owl#turn:0:model").map((p) => p.type)).toEqual([
        "start-step",
        "tool-call",
        "tool-call",
        "finish-step",
      ]);
      expect(
        parts
          .filter((p) => p.stepId === "owl#turn:1:model" && p.type === "text-delta")
          .map((p) => p.delta)
          .join(""),
      ).toBe(ANSWER);
    }, 120_000);
  });
}
