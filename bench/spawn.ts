// Fresh processes for the resume measurements: `node --import tsx <script> <json args>`, the same
// kind of process for a resume and for its floor. A child prints one JSON line last; we parse it.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** What every child reports: its own timings (ms, performance.now) and whatever else it measured. */
export interface ChildReport {
  /** Milliseconds of the measured work, timed inside the child after its imports. */
  ms: number;
  /** Milliseconds from the process's time origin to the end of the work (bootstrap, loader, imports, work). */
  sinceStart: number;
  [fact: string]: unknown;
}

/** Runs `bench/child/<name>.ts` in a fresh Node process with `args` (and Node `flags`) and resolves with its report. */
export function runChild(name: string, args: unknown, flags: string[] = []): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...flags, "--import", "tsx", `bench/child/${name}.ts`, JSON.stringify(args)],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, NODE_NO_WARNINGS: "1" },
      },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const last = out.trim().split("\n").at(-1) ?? "";
      if (code !== 0) {
        const oom = /heap out of memory|Allocation failed/i.test(err);
        return reject(
          new Error(
            oom
              ? `ran out of heap (${flags.join(" ")})`
              : `bench/child/${name}.ts exited with ${code}: ${(err.trim() || out.trim()).slice(-2000)}`,
          ),
        );
      }
      try {
        resolve(JSON.parse(last) as ChildReport);
      } catch {
        reject(new Error(`bench/child/${name}.ts printed no report: ${out.trim()} ${err.trim()}`));
      }
    });
  });
}

/**
 * Starts `bench/child/<name>.ts` as a long-lived process (a server) and resolves with the first line it
 * prints (its address) once it has; `close()` ends its stdin, on which it exits.
 */
export function serveChild(name: string, args: unknown): Promise<{ line: string; close(): void }> {
  const child = spawn(process.execPath, ["--import", "tsx", `bench/child/${name}.ts`, JSON.stringify(args)], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const early = (code: number | null) =>
      reject(new Error(`bench/child/${name}.ts exited with ${code} before it printed its first line`));
    child.once("error", reject);
    child.once("exit", early);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes("\n")) return;
      child.off("exit", early);
      child.stdout.off("data", onData);
      child.stdout.resume(); // what it prints later is not read
      resolve({ line: out.slice(0, out.indexOf("\n")).trim(), close: () => child.stdin.end() });
    };
    child.stdout.on("data", onData);
  });
}

/** The last line a child prints: its report, then it exits (a stalled effect must not keep it alive). */
export function report(facts: Omit<ChildReport, "sinceStart">): never {
  process.stdout.write(`${JSON.stringify({ ...facts, sinceStart: performance.now() })}\n`, () => process.exit(0));
  return undefined as never;
}
