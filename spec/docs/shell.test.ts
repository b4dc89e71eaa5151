// The shell commands of the docs print what the docs say. Each block is read from its page and run as
// written (bash, `set -o pipefail`), in a scratch project whose node_modules/.bin/loomwork is this
// checkout's CLI: so `npx loomwork ...` resolves there as in an app that depends on loomwork, offline.
// What each command is said to print is asserted on its own output.
import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runBlock, writeBlocks } from "./check.js";
import { allBlocks } from "./extract.js";

const run = promisify(execFile);
let project: string;

/** The lines of the `sh` block of `doc` that contains `marker`, with the page line of each. */
async function shellBlock(doc: string, marker: string): Promise<{ line: number; command: string }[]> {
  const lines = (await readFile(join(ROOT, doc), "utf8")).split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash)\b/.test(lines[i]!)) continue;
    let end = i + 1;
    while (!lines[end]!.startsWith("```")) end++;
    const body = lines.slice(i + 1, end);
    if (body.some((l) => l.includes(marker))) return body.map((command, k) => ({ line: i + 2 + k, command }));
    i = end;
  }
  throw new Error(`${doc}: no sh block contains ${JSON.stringify(marker)}`);
}

async function sh(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, NO_COLOR: "1", PATH: `${join(project, "node_modules", ".bin")}:${process.env.PATH}` };
  try {
    const { stdout, stderr } = await run("bash", ["-o", "pipefail", "-c", script], {
      cwd: project,
      env,
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), "loomwork-doc-sh-"));
  await writeFile(join(project, "package.json"), JSON.stringify({ name: "app", private: true }));
  const bin = join(project, "node_modules", ".bin", "loomwork");
  await mkdir(join(project, "node_modules", ".bin"), { recursive: true });
  await writeFile(
    bin,
    `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, "node_modules", "tsx", "dist", "cli.mjs")}" "${join(ROOT, "cli", "main.ts")}" "$@"\n`,
  );
  await chmod(bin, 0o755);
  // What the pages assume ran first: the getting-started agent (owls-1) and the research-agent story (research-1), in ./.loomwork.
  const agent = writeBlocks(allBlocks(ROOT), join(ROOT, ".tmp", "docs-blocks-sh")).find(
    (b) => b.doc === "docs/getting-started.md" && b.code.includes('"owls-1"'),
  );
  const ran = await runBlock(agent!, 60_000, project);
  expect(ran.code, ran.stderr).toBe(0);
  const story = await sh(`loomwork run research-agent --dir ./.loomwork`);
  expect(story.code, story.stderr).toBe(0);
}, 180_000);

afterAll(() => rm(project, { recursive: true, force: true }));

describe("docs/getting-started.md: looking inside the journal", () => {
  it("ls, log and stats print the executions, the timeline and the sizes", async () => {
    const [ls, log, stats] = await shellBlock("docs/getting-started.md", "npx loomwork ls");
    const listed = await sh(ls!.command);
    expect(listed.code, `docs/getting-started.md:${ls!.line}`).toBe(0);
    expect(listed.stdout).toMatch(/owls-1\s+researcher\s+\S+\s+done/); // executions, status, sizes
    expect(listed.stdout).toMatch(/KiB/);
    const timeline = await sh(log!.command);
    expect(timeline.code, `docs/getting-started.md:${log!.line}`).toBe(0);
    expect(timeline.stdout).toMatch(/turn:0:model/); // steps
    expect(timeline.stdout).toMatch(/thinking → acting/); // transitions
    expect(timeline.stdout).toMatch(/ended done output \{"text":"Owls hunt by ear\."/); // outputs
    const sizes = await sh(stats!.command);
    expect(sizes.code, `docs/getting-started.md:${stats!.line}`).toBe(0);
    expect(sizes.stdout).toMatch(/owls-1/);
    expect(sizes.stdout).toMatch(/\d+(\.\d+)? (B|KiB)/); // log and state bytes
  }, 120_000);
});

describe("docs/cli.md", () => {
  it("the first example: ls lists research-1 done, log prints its timeline, stats --json | jq '.warnings' prints []", async () => {
    const [ls, log, stats] = await shellBlock("docs/cli.md", "npx loomwork log research-1");
    expect((await sh(ls!.command)).stdout).toMatch(/research-1\s+researcher\s+\S+\s+done/);
    const timeline = await sh(log!.command);
    expect(timeline.code, `docs/cli.md:${log!.line}`).toBe(0);
    expect(timeline.stdout).toMatch(/^research-1 · researcher · done/);
    const warnings = await sh(stats!.command);
    expect(warnings.code, `docs/cli.md:${stats!.line}`).toBe(0);
    expect(JSON.parse(warnings.stdout)).toEqual([]);
  }, 120_000);

  it("the script of 'In scripts' runs under set -e: a backup per running execution, stats.json written", async () => {
    // The executions ls says are running when the script starts: one backup file each (none here: both runs ended).
    const parked = await sh(`loomwork ls --json`);
    expect(parked.code).toBe(0);
    const script = (await shellBlock("docs/cli.md", "backup/$id.json")).map((l) => l.command).join("\n");
    const result = await sh(script);
    expect(result.code, `docs/cli.md "In scripts": ${result.stderr}`).toBe(0);
    const running = (JSON.parse(parked.stdout) as { executionId: string; status: string }[])
      .filter((e) => e.status === "running")
      .map((e) => `${e.executionId}.json`);
    expect((await readdir(join(project, "backup"))).sort()).toEqual(running.sort());
    const written = JSON.parse(await readFile(join(project, "stats.json"), "utf8")) as { warnings: unknown[] };
    expect(written.warnings).toEqual([]);
  }, 120_000);
});
