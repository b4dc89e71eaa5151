// The package as a user installs it: packed with `npm pack` (its prepare script builds dist/), unpacked
// into a fresh project's node_modules, then loaded from CommonJS and from ESM, and its CLI run.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");
const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string; dependencies: Record<string, string> };

let work: string;
let project: string;
let files: string[];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "loomwork-pack-"));
  // npm pack runs the prepare script, which builds dist/ (as an install from git or a folder does).
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], { cwd: ROOT });
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  files = packed!.files.map((f) => f.path);
  // A fresh project: the tarball unpacked as node_modules/loomwork, its dependencies linked from this checkout.
  project = join(work, "app");
  const installed = join(project, "node_modules", "loomwork");
  await mkdir(installed, { recursive: true });
  await run("tar", ["-xzf", join(work, packed!.filename), "-C", installed, "--strip-components=1"]);
  for (const dep of Object.keys(manifest.dependencies)) {
    const link = join(project, "node_modules", dep);
    await mkdir(dirname(link), { recursive: true });
    await symlink(join(ROOT, "node_modules", dep), link);
  }
}, 120_000);

afterAll(() => rm(work, { recursive: true, force: true }));

const node = (args: string[]) => run(process.execPath, args, { cwd: project });

describe("the packed package", () => {
  it("ships the build, its types, the README and the LICENSE, and no TypeScript sources", () => {
    for (const file of ["package.json", "README.md", "LICENSE", "dist/index.js", "dist/index.d.ts", "dist/adapters/fs/index.js", "dist/adapters/indexeddb/index.js", "dist/cli/main.js"]) {
      expect(files, file).toContain(file);
    }
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
  });

  it("has source maps that carry their sources (the .ts files are not shipped)", async () => {
    const maps = files.filter((f) => f.endsWith(".js.map"));
    expect(maps.length).toBeGreaterThan(10);
    for (const map of maps) {
      const parsed = JSON.parse(await readFile(join(project, "node_modules", "loomwork", map), "utf8")) as { sources: string[]; sourcesContent?: string[] };
      expect(parsed.sourcesContent?.length, map).toBe(parsed.sources.length);
    }
  });

  it("loads from CommonJS: require('loomwork') and its adapters (a desktop main process)", async () => {
    const { stdout } = await node([
      "-e",
      'const l = require("loomwork"); const fs = require("loomwork/fs"); const idb = require("loomwork/indexeddb");' +
        'console.log([typeof l.createApp, typeof l.agentLoop$, typeof fs.fsStores, typeof idb.indexedDbStores, require("loomwork/package.json").version].join(" "))',
    ]);
    expect(stdout.trim()).toBe(`function function function function ${manifest.version}`);
  });

  it("loads from ESM and runs a journaled execution on memory stores", async () => {
    const script = [
      'import { createApp, defineConfig, memoryStores } from "loomwork";',
      'import { createMachine } from "xstate";',
      "const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));",
      'await app.start(createMachine({ id: "m", initial: "a", states: { a: { type: "final" } } }), { executionId: "x" });',
      'await app.result("x");',
      'console.log((await app.log("x")).map((r) => r.type).join(","));',
    ].join("\n");
    // xstate is resolved from the project, as the package's own dependency.
    const { stdout } = await node(["--input-type=module", "-e", script]);
    expect(stdout.trim()).toBe("loom.execution.started,loom.transition,loom.execution.ended");
  });

  it("runs its CLI from the installed bin", async () => {
    const { stdout } = await node([join("node_modules", "loomwork", "dist", "cli", "main.js"), "--version"]);
    expect(stdout.trim()).toBe(manifest.version);
    expect((await readdir(join(project, "node_modules", "loomwork", "dist", "cli"))).length).toBeGreaterThan(3);
  });
});
