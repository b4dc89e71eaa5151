// Shared helpers of the fs adapter specs: temp directories, seam wrappers and child processes.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { tempDirs } from "../support/tempDirs.js";

export { started, step } from "../conformance/suite.js";

export const { tempDir, removeTempDirs } = tempDirs("fs");

export const ioError = (code: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`${code}: injected by the test`), { code });

/** Runs a TypeScript child script under tsx with `args`. */
export function spawnChild(script: string, args: string[]): ChildProcess {
  const path = fileURLToPath(new URL(`./children/${script}`, import.meta.url));
  return spawn(process.execPath, ["--import", "tsx", path, ...args], { stdio: ["ignore", "pipe", "pipe"] });
}

/** Resolves with the child's stdout once `done(stdout)` holds; rejects if the child exits first. */
export function waitForOutput(
  child: ChildProcess,
  done: (stdout: string) => boolean,
  timeoutMs = 15_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(
      () => reject(new Error(`child timed out; stdout: ${stdout} stderr: ${stderr}`)),
      timeoutMs,
    );
    const finish = (error?: Error) => {
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      child.off("close", onExit);
      if (error) reject(error);
      else resolve(stdout);
    };
    const onData = (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      if (done(stdout)) finish();
    };
    const onExit = (code: number | null) => {
      if (done(stdout)) finish();
      else finish(new Error(`child exited (${code}) early; stdout: ${stdout} stderr: ${stderr}`));
    };
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.stdout!.on("data", onData);
    // "close", not "exit": the child's last lines may still be in the pipe when it exits.
    child.on("close", onExit);
  });
}

/** Sends SIGKILL and resolves once the child is reaped (its pid no longer exists). */
export function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}
