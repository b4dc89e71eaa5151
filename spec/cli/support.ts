// A real journal directory for the CLI tests, written by agents on fsStores, and a way to run the CLI
// as a user does: a spawned `node --import tsx cli/main.ts ...` process.
import { execFile, spawn } from "node:child_process";
import { cp, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fsStores } from "../../adapters/fs/index.js";
import { agentLoop$, createApp, createLlmEffect, createToolEffect, defineConfig, scriptedModel } from "../../index.js";
import { researchAgent, RESEARCH_QUESTION, researchEffects } from "../../stories/support/researchAgent.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in a child process; never throws on a non-zero exit. */
export function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  // The test runner may set FORCE_COLOR for itself: the CLI starts from a plain environment.
  const base = { ...process.env };
  delete base.FORCE_COLOR;
  delete base.NO_COLOR;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "cli/main.ts", ...args],
      { encoding: "utf8", env: { ...base, ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** An envelope as the claim-check journals it in place of a large tool result. */
export const ENVELOPE = {
  __loomClaimCheck: 1,
  ref: { __loomContent: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" },
  size: 18_432,
  digest: { preview: '{"rows":[{"id":0,"text":"owl barn night"}', truncated: true },
};

export interface Journal {
  dir: string;
  /** app.stats("research-done").stateBytes, measured by the runtime itself. */
  researchStateBytes: number;
}

/**
 * Three executions: `research-done` (the research agent, finished, subject user-42), `research-unfinished`
 * (stopped by an app quit after its first turn) and `bulk-export` (a claim-check envelope and a 20 KiB output).
 */
export async function makeJournal(): Promise<Journal> {
  const dir = await mkdtemp(join(tmpdir(), "loomwork-cli-"));
  const stores = await fsStores({ dir });
  const bulk = agentLoop$({ id: "exporter", model: "model", tools: ["exportRows", "dumpRows"] });
  const effects = {
    ...researchEffects({ modelMs: 1, toolMs: 1 }),
    exportRows: createToolEffect(async () => ENVELOPE),
    dumpRows: createToolEffect(async () => ({ rows: "owl ".repeat(5_000) })),
  };
  const app = createApp(defineConfig({ stores, effects, logics: [researchAgent, bulk] }));
  try {
    await app.start(researchAgent, {
      executionId: "research-done",
      subject: "user-42",
      input: { prompt: RESEARCH_QUESTION },
    });
    await app.result("research-done");
    const researchStateBytes = (await app.stats("research-done")).stateBytes;
    const bulkApp = createApp(
      defineConfig({
        stores,
        effects: {
          ...effects,
          model: createLlmEffect(
            scriptedModel([
              {
                toolCalls: [
                  { toolName: "exportRows", input: {} },
                  { toolName: "dumpRows", input: {} },
                ],
              },
              { text: "Exported." },
            ]),
          ),
        },
      }),
    );
    await bulkApp.start(bulk, { executionId: "bulk-export", input: { prompt: "Export the rows." } });
    await bulkApp.result("bulk-export");
    await bulkApp.close();
    // Quit mid-run: the app closes while the second model call is in flight.
    const slow = createApp(defineConfig({ stores, effects: researchEffects({ modelMs: 400, toolMs: 1 }) }));
    const firstTurn = new Promise<void>((resolve) =>
      slow.on("append", ({ records }) => records.some((r) => r.from === "acting" && r.to === "thinking") && resolve()),
    );
    await slow.start(researchAgent, { executionId: "research-unfinished", input: { prompt: RESEARCH_QUESTION } });
    await firstTurn;
    await slow.close();
    return { dir, researchStateBytes };
  } finally {
    await app.close();
    await stores.close();
  }
}

/** A copy of the journal with one byte flipped in a middle frame of the execution's log. */
export async function corruptCopy(dir: string, executionName: string): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), "loomwork-corrupt-"));
  await cp(dir, copy, { recursive: true });
  const log = join(copy, "executions", executionName, "log");
  const bytes = await readFile(log);
  bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
  await writeFile(log, bytes);
  return copy;
}

/** The folder name of an execution under executions/ (x + the id's UTF-8 in hex). */
export async function executionFolder(dir: string, executionId: string): Promise<string> {
  const name = `x${Buffer.from(executionId, "utf8").toString("hex")}`;
  if (!(await readdir(join(dir, "executions"))).includes(name)) throw new Error(`no folder for ${executionId}`);
  return name;
}

// eslint-disable-next-line no-control-regex
export const ANSI = /\u001b\[/;

export interface RunningCli {
  /** What the process printed on stdout so far. */
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves once stdout contains `text`; rejects if the process exits first or after `timeoutMs`. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  /** The exit code (128 + n for a signal). */
  readonly exited: Promise<number>;
  kill(signal?: NodeJS.Signals): void;
}

/** Starts the CLI as a long-running child process (`loomwork follow`), its output readable while it runs. */
export function spawnCli(args: string[]): RunningCli {
  const base = { ...process.env };
  delete base.FORCE_COLOR;
  delete base.NO_COLOR;
  const child = spawn(process.execPath, ["--import", "tsx", "cli/main.ts", ...args], {
    env: base,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  let exitCode: number | undefined;
  const exited = new Promise<number>((resolve) =>
    child.on("exit", (code, signal) =>
      resolve((exitCode = code ?? 128 + (signal === "SIGINT" ? 2 : signal === "SIGKILL" ? 9 : 15))),
    ),
  );
  return {
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    async waitFor(text, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      const seen = () => (typeof text === "string" ? stdout.includes(text) : text.test(stdout));
      while (!seen()) {
        if (exitCode !== undefined)
          throw new Error(
            `loomwork ${args[0]} exited (${exitCode}) before printing ${String(text)}; stdout:\n${stdout}\nstderr:\n${stderr}`,
          );
        if (Date.now() > deadline)
          throw new Error(
            `loomwork ${args[0]}: ${String(text)} not printed after ${timeoutMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    exited,
    kill: (signal = "SIGTERM") => void child.kill(signal),
  };
}
