// The stories' second processes: a story file run again in a child process (`node --import tsx <file> ...args`),
// its stdout read line by line. Lines tagged CHILD_TAG are its messages to the story; the rest is printed through.
import { spawn, type ChildProcess } from "node:child_process";
import { fsStores } from "../../adapters/fs/index.js";
import { CHILD_TAG } from "./terminal.js";

/** Runs `file` with `args` in a child process (cwd `cwd`); `onMessage` hears each CHILD_TAG line, parsed. */
export function runStoryChild<M>(
  file: string,
  args: readonly string[],
  options: { cwd?: string; onMessage?: (message: M, pid: number) => void; onLine?: (line: string) => void },
): { proc: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const proc = spawn(process.execPath, ["--import", "tsx", file, ...args], {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    stdio: ["ignore", "pipe", "inherit"],
  });
  let buffered = "";
  proc.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (options.onLine) options.onLine(line);
      else if (line.startsWith(CHILD_TAG))
        options.onMessage?.(JSON.parse(line.slice(CHILD_TAG.length)) as M, proc.pid!);
      else if (line.trim()) process.stdout.write(`${line}\n`);
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    proc.on("exit", (code, signal) => done({ code, signal })),
  );
  return { proc, exited };
}

/** `<prefix>1` in a new directory, then `<prefix>2`, ...: the first id no execution of `dir` has. */
export async function nextFreeId(dir: string, prefix: string): Promise<string> {
  const stores = await fsStores({ dir });
  try {
    const taken = new Set((await stores.events.listExecutions()).map((e) => e.executionId));
    let n = 1;
    while (taken.has(`${prefix}${n}`)) n++;
    return `${prefix}${n}`;
  } finally {
    await stores.close();
  }
}

/**
 * Runs a story file with `--run <journal>` in a second process and SIGKILLs it at the first line matching `at`;
 * resolves with the calls it started (its `call ...` lines). Rejects when the run ended first.
 */
export async function runUntilKilled(file: string, journal: string, at: RegExp): Promise<string[]> {
  const calls: string[] = [];
  const child = runStoryChild(file, ["--run", journal], {
    onLine: (l) => {
      if (l.startsWith("call ")) calls.push(l.slice(5));
      if (at.test(l)) child.proc.kill("SIGKILL");
    },
  });
  const { signal } = await child.exited;
  if (signal !== "SIGKILL") throw new Error(`the run ended before ${String(at)}`);
  return calls;
}

/** Runs a story file with `--resume <journal>` in a fresh process to its end; resolves with its non-empty lines. */
export async function runToEnd(file: string, journal: string): Promise<string[]> {
  const lines: string[] = [];
  const { code } = await runStoryChild(file, ["--resume", journal], { onLine: (l) => void lines.push(l) }).exited;
  if (code !== 0) throw new Error(`resume exited ${code}`);
  return lines.filter((l) => l.trim());
}
