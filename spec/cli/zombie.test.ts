// Right after a SIGKILL, a dead app its parent has not reaped yet (a zombie, state Z in /proc/<pid>/stat) holds
// nothing: the CLI takes its lock over instead of exiting 5 "held by a running app".
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { tempDirs } from "../support/tempDirs.js";
import { cli } from "./support.js";

const { tempDir, removeTempDirs } = tempDirs("cli-zombie");
afterAll(removeTempDirs);

const state = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
};

describe.runIf(process.platform === "linux")("a killed app not yet reaped", () => {
  it("is no app: the CLI journals the command itself with --logic", async () => {
    const dir = await tempDir("zombie");
    // The app's parent is a shell that execs sleep, which never reaps it: once killed, the app stays a zombie.
    const parent = spawn(
      "sh",
      ["-c", `${process.execPath} --import tsx spec/cli/controlledApp.ts & echo "pid:$!"; exec sleep 120`],
      {
        env: { ...process.env, LOOMWORK_DIR: dir },
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    try {
      const pid = await new Promise<number>((resolve, reject) => {
        let text = "";
        parent.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          text += chunk;
          const found = /pid:(\d+)[\s\S]*ready/.exec(text);
          if (found) resolve(Number(found[1]));
        });
        parent.once("exit", (code) => reject(new Error(`the shell exited (${code}) before the app was ready`)));
      });
      process.kill(pid, "SIGKILL");
      for (let i = 0; i < 400 && state(pid) !== "Z"; i++) await new Promise((r) => setTimeout(r, 5));
      expect(state(pid)).toBe("Z");
      const offline = await cli([
        "send",
        "gate-2",
        '{"type":"GO","text":"after the crash"}',
        "--dir",
        dir,
        "--logic",
        "spec/cli/operateMachines.ts",
        "--json",
      ]);
      expect(offline.stderr).toBe("");
      expect(offline.code).toBe(0);
      expect(JSON.parse(offline.stdout)).toMatchObject({ via: "journal", value: "working" });
    } finally {
      parent.kill("SIGKILL");
    }
  });
});
