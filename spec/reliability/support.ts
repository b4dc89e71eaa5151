// Shared pieces of the reliability campaigns (docs/reliability.md): case counts (CI or soak), temp
// directories, child processes, the small agent every crash campaign runs, and the checks they share.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp, type App } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect, type Effect } from "../../actors/effects/effect.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { tempDirs } from "../support/tempDirs.js";
import { STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { StoredRecord, Stores } from "../../stores/types.js";
import { toolOutput, workloadReply } from "../support/workload.js";

/** `npm run soak` sets LOOMWORK_SOAK=1: every campaign runs its larger count. */
export const SOAK = process.env.LOOMWORK_SOAK === "1";

/** The CI count, or the soak count under `npm run soak`; LOOMWORK_<NAME> overrides both. */
export function cases(name: string, ci: number, soak: number): number {
  const override = Number(process.env[`LOOMWORK_${name}`]);
  return Number.isInteger(override) && override > 0 ? override : SOAK ? soak : ci;
}

/** A per-test timeout that grows with the soak counts. */
export const timeout = (ciMs: number, soakMs = ciMs * 20): number => (SOAK ? soakMs : ciMs);

// ---------------------------------------------------------------------------------------------------
// Temp directories

export const { tempDir, removeTempDirs } = tempDirs("rel");

// ---------------------------------------------------------------------------------------------------
// The agent the crash campaigns run: a few turns of the seeded workload, with a tool whose side effect
// (keyed by ctx.idempotencyKey) is appended to a side file with O_APPEND and fsync'd.

export const AGENT_ID = "agent";
export const EXECUTION_ID = "run";

export function crashAgent(turns: number) {
  return agentLoop$({ id: AGENT_ID, model: "model", tools: ["search"], maxTurns: turns, warnTranscriptBytes: false });
}

/**
 * The agent's effects. `sideEffect(key, line)` is the tool's external side effect; the child process
 * makes it a write point and appends it to the side file.
 */
export function crashAgentEffects(
  turns: number,
  sideEffect: (key: string, turn: number) => Promise<void> | void,
): Record<string, Effect> {
  return {
    model: createLlmEffect(scriptedModel(workloadReply(turns))),
    search: createToolEffect(async (_input: unknown, ctx) => {
      const turn = Number(/turn:(\d+):tool/.exec(ctx.stepId)?.[1] ?? -1);
      await sideEffect(ctx.idempotencyKey, turn);
      return toolOutput(42, turn);
    }),
  };
}

/**
 * Runs the crash agent to its end on `stores` in this process (start, or resume when the journal has
 * it); every acknowledged append is pushed to `acked`. Closes the app, not the stores.
 */
export async function runCrashAgent(
  stores: Stores,
  options: {
    turns: number;
    acked?: StoredRecord[];
    sideEffect?: (key: string, turn: number) => Promise<void> | void;
    app?: (app: App) => void;
  },
): Promise<{ result: unknown; log: StoredRecord[] }> {
  const loop = crashAgent(options.turns);
  const app = createApp(
    defineConfig({
      stores,
      effects: crashAgentEffects(options.turns, options.sideEffect ?? (() => undefined)),
      logics: [loop],
      execution: { snapshotEvery: 6 },
    }),
  );
  options.app?.(app);
  app.on("append", ({ records }) => options.acked?.push(...records));
  try {
    if ((await stores.events.head(EXECUTION_ID)) === 0)
      await app.start(loop, { executionId: EXECUTION_ID, input: { prompt: "research barn owls" } });
    else await app.resume(EXECUTION_ID);
    const result = await app.result(EXECUTION_ID);
    return { result, log: await app.log(EXECUTION_ID) };
  } finally {
    await app.close();
  }
}

/** Side-file lines `<idempotencyKey>\t<turn>`, counted per key. A torn last line (no newline) is ignored. */
export async function sideEffects(path: string): Promise<Map<string, number>> {
  let text = "";
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const counts = new Map<string, number>();
  const lines = text.split("\n");
  lines.pop();
  for (const line of lines) {
    const key = line.split("\t")[0]!;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

// ---------------------------------------------------------------------------------------------------
// Child processes

const built = new Map<string, Promise<string>>();

/**
 * Bundles spec/reliability/children/<script> into one plain ES module (Vite, SSR build, everything
 * inlined), once per test process: a child then starts in ~0.3 s instead of ~1 s under tsx, which is
 * what makes a fresh process per write point affordable in CI.
 */
export function buildChild(script: string): Promise<string> {
  let path = built.get(script);
  if (!path) {
    path = (async () => {
      const { build } = await import("vite");
      const outDir = await tempDir("child");
      const entry = fileURLToPath(new URL(`./children/${script}`, import.meta.url));
      await build({
        configFile: false,
        logLevel: "warn",
        root: fileURLToPath(new URL("../..", import.meta.url)),
        ssr: { noExternal: true, target: "node" },
        build: {
          ssr: entry,
          outDir,
          emptyOutDir: true,
          minify: false,
          target: "node20",
          reportCompressedSize: false,
          rollupOptions: { output: { format: "esm", entryFileNames: "[name].mjs" } },
        },
      });
      return join(outDir, script.replace(/\.ts$/, ".mjs"));
    })();
    built.set(script, path);
  }
  return path;
}

/** Starts a child built by `buildChild` with `args`. */
export async function spawnChild(script: string, args: string[]): Promise<ChildProcess> {
  const path = await buildChild(script);
  return spawn(process.execPath, [path, ...args], { stdio: ["ignore", "pipe", "pipe"] });
}

export interface ChildRun {
  stdout: string;
  stderr: string;
  /** The exit code, or null when the parent killed it. */
  code: number | null;
}

/**
 * Reads the child's stdout line by line; when `killWhen(line)` holds, SIGKILLs it. Resolves once the
 * child is gone (exited, or killed and reaped).
 */
export function runChild(
  child: ChildProcess,
  options: { killWhen?: (line: string) => boolean; timeoutMs?: number } = {},
): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    let pending = "";
    let killed = false;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `child timed out after ${options.timeoutMs ?? 30_000} ms; stdout tail: ${stdout.slice(-2_000)} stderr: ${stderr.slice(-2_000)}`,
        ),
      );
    }, options.timeoutMs ?? 30_000);
    // Decoded by the stream, so a character split across two chunks is not garbled.
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stdout!.on("data", (text: string) => {
      stdout += text;
      pending += text;
      const lines = pending.split("\n");
      pending = lines.pop()!;
      if (!killed && options.killWhen && lines.some(options.killWhen)) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr!.on("data", (text: string) => (stderr += text));
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    // "close", not "exit": the child's last lines may still be in the pipe when it exits.
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code: killed ? null : code });
    });
  });
}

/** A child kept alive while the test works beside it. */
export class LiveChild {
  stdout = "";
  stderr = "";
  readonly exited: Promise<number | null>;
  private waiters: { test: (stdout: string) => boolean; resolve: () => void }[] = [];

  constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stdout!.on("data", (text: string) => {
      this.stdout += text;
      this.waiters = this.waiters.filter((w) => (w.test(this.stdout) ? (w.resolve(), false) : true));
    });
    child.stderr!.on("data", (text: string) => (this.stderr += text));
    // "close", not "exit": stdout is read to its end before the child counts as gone.
    this.exited = new Promise((resolve) => child.on("close", (code) => resolve(code)));
  }

  /** Resolves once stdout satisfies `test`; rejects if the child exits first or after `timeoutMs`. */
  waitFor(test: (stdout: string) => boolean, timeoutMs = 30_000): Promise<void> {
    if (test(this.stdout)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `child: timed out; stdout tail: ${this.stdout.slice(-1_500)} stderr: ${this.stderr.slice(-1_500)}`,
            ),
          ),
        timeoutMs,
      );
      this.waiters.push({ test, resolve: () => (clearTimeout(timer), resolve()) });
      void this.exited.then((code) => {
        clearTimeout(timer);
        if (test(this.stdout)) resolve();
        else
          reject(
            new Error(
              `child exited (${code}) first; stdout tail: ${this.stdout.slice(-1_500)} stderr: ${this.stderr.slice(-1_500)}`,
            ),
          );
      });
    });
  }

  /** SIGKILL, resolved once the child is reaped. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }
}

/** Lines of `stdout` that start with `<word> `, with the word removed. */
export function linesOf(stdout: string, word: string): string[] {
  return stdout
    .split("\n")
    .filter((line) => line.startsWith(`${word} `))
    .map((line) => line.slice(word.length + 1));
}

/** Runs `work` over `items` with at most `limit` at a time, in item order of start. */
export async function pool<T, R>(
  items: T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  });
  await Promise.all(workers);
  return results;
}

// ---------------------------------------------------------------------------------------------------
// Journal checks shared by the campaigns

/** Seqs 1..n with no gap and no repeat. */
export function contiguous(log: StoredRecord[]): boolean {
  return log.every((record, i) => record.seq === i + 1);
}

/** The records without their clock stamps: what two runs of the same execution must agree on. */
export function withoutTime(log: StoredRecord[]): Omit<StoredRecord, "at">[] {
  return log.map(({ at: _at, ...rest }) => rest);
}

/** Step ids with more than one outcome record (should be none). */
export function duplicateOutcomes(log: StoredRecord[]): string[] {
  const seen = new Set<string>();
  const twice: string[] = [];
  for (const record of log) {
    if (record.type !== STEP_COMPLETED && record.type !== STEP_FAILED) continue;
    const id = record.stepId as string;
    if (seen.has(id)) twice.push(id);
    seen.add(id);
  }
  return twice;
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Forces a full GC when the process allows it (the forks pool does not pass --expose-gc). */
export async function collectGarbage(): Promise<void> {
  const { setFlagsFromString } = await import("node:v8");
  const { runInNewContext } = await import("node:vm");
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  gc();
  gc();
}
