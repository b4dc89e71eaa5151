// Type-checks the documentation's TypeScript blocks in one program and runs the runnable ones, each in
// a fresh temporary directory as its working directory. Used by spec/docs/docs.test.ts; also a command:
//   npx tsx spec/docs/check.ts [--types]   every problem, as docs/<page>.md:<line>:<column>, exit 1 if any
//                                          (--types: type-check only, run nothing)
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { allBlocks, blockFileName, entryPoints, mapSpecifiers, type DocBlock } from "./extract.js";

export const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
/** Where the blocks are written: inside the checkout (so `zod`, `xstate`, ... resolve from its node_modules), ignored by git. */
export const OUT_DIR = join(ROOT, ".tmp", "docs-blocks");

export interface WrittenBlock extends DocBlock {
  file: string;
}

/** Writes every block that is not a fragment to `dir` (emptied first; inside the checkout); returns them with their files. */
export function writeBlocks(blocks: DocBlock[] = allBlocks(ROOT), dir = OUT_DIR): WrittenBlock[] {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  const entries = entryPoints(ROOT);
  return blocks
    .filter((b) => b.mode !== "fragment")
    .map((block) => {
      const file = join(dir, blockFileName(block));
      writeFileSync(file, mapSpecifiers(block.code, entries, ROOT, dir));
      return { ...block, file };
    });
}

/** A problem with a block, located in its page: `docs/agents.md:12:5 TS2304: Cannot find name 'stores'.` */
export interface DocProblem {
  doc: string;
  line: number;
  column: number;
  message: string;
}

export function formatProblem(p: DocProblem): string {
  return `${p.doc}:${p.line}:${p.column} ${p.message}`;
}

/** Type-checks the written blocks as one program under the checkout's tsconfig.json (plus JSX for .tsx). */
export function typeCheck(blocks: WrittenBlock[]): DocProblem[] {
  const configFile = ts.readConfigFile(join(ROOT, "tsconfig.json"), (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: true,
    declaration: false,
    sourceMap: false,
    jsx: ts.JsxEmit.ReactJSX,
    moduleDetection: ts.ModuleDetectionKind.Force,
  };
  // electron.d.ts: the subset of Electron's API the desktop blocks use (Electron is not installed here).
  const program = ts.createProgram(
    [...blocks.map((b) => b.file), join(ROOT, "spec", "docs", "electron.d.ts")],
    options,
  );
  const byFile = new Map(blocks.map((b) => [resolve(b.file), b]));
  const problems: DocProblem[] = [];
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const message = `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n  ")}`;
    const block = d.file ? byFile.get(resolve(d.file.fileName)) : undefined;
    if (!d.file || d.start === undefined || !block) {
      // An error outside the blocks (the checkout's own sources, the options): reported as it is.
      problems.push({ doc: d.file?.fileName ?? "(program)", line: 0, column: 0, message });
      continue;
    }
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    problems.push({ doc: block.doc, line: block.line + line, column: character + 1, message });
  }
  return problems;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs one block with tsx in a fresh temporary directory (its cwd, so a `.loomwork` it creates lands
 * there), with no API keys in its environment; removes the directory after. With `inDir`, runs it
 * there instead and leaves what it wrote.
 */
export function runBlock(block: WrittenBlock, timeoutMs = 45_000, inDir?: string): Promise<RunResult> {
  const cwd = inDir ?? mkdtempSync(join(tmpdir(), "loomwork-doc-"));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/KEY|TOKEN|SECRET|^LOOMWORK_|^VITEST|^NODE_OPTIONS$/.test(k)) env[k] = v;
  const tsx = join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");
  return new Promise((done) => {
    const child = spawn(process.execPath, [tsx, block.file], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (!inDir) rmSync(cwd, { recursive: true, force: true });
      done({ code, stdout, stderr, timedOut });
    });
  });
}

/** What a failed run says, located in its page. */
export function describeRun(block: WrittenBlock, result: RunResult): string {
  const why = result.timedOut ? "did not end (killed after its timeout)" : `exited with ${result.code}`;
  const tail = (result.stderr || result.stdout).trim().split("\n").slice(-12).join("\n  ");
  return `${block.doc}:${block.line} the block ${why}; mark it \`\`\`ts check if it cannot run offline in an empty directory:\n  ${tail}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const blocks = writeBlocks();
  const problems = typeCheck(blocks);
  for (const p of problems) console.log(formatProblem(p));
  let failed = problems.length > 0;
  for (const block of blocks.filter((b) => b.mode === "run" && !process.argv.includes("--types"))) {
    const result = await runBlock(block);
    if (result.code !== 0) {
      failed = true;
      console.log(describeRun(block, result));
    } else console.log(`${block.doc}:${block.line} ran`);
  }
  const counts = { run: 0, check: 0, fragment: 0 };
  for (const b of allBlocks(ROOT)) counts[b.mode]++;
  console.log(
    `${counts.run} blocks run, ${counts.check} type-checked only, ${counts.fragment} fragments; ${problems.length} type errors`,
  );
  process.exit(failed ? 1 : 0);
}
