// The package as a user installs it: packed with `npm pack` (its prepare script builds dist/), unpacked
// into a fresh project's node_modules, then loaded from CommonJS and from ESM, and its CLI run. xstate is
// a peer dependency: the project brings its own, here the lowest 5.x the range admits (5.19.0, the first
// with the pure `transition` / `initialTransition` the runtime drives machines with), unpacked from
// spec/fixtures/packaging/xstate-5.19.0.tgz (`npm pack xstate@5.19.0`: no network in the test), while
// this checkout's tests run on the exact devDependency. A second project, on the xstate the declarations
// are built against, type-checks them as a strict TypeScript app does (`skipLibCheck: false`).
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, posix, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");
const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};
const PROJECT_XSTATE = "5.19.0";

let work: string;
let project: string;
let strict: string;
let files: string[];

/** A fresh project: the tarball unpacked as node_modules/loomwork, its dependencies linked from this checkout. */
async function unpackInto(dir: string, tarball: string): Promise<void> {
  const installed = join(dir, "node_modules", "loomwork");
  await mkdir(installed, { recursive: true });
  await run("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"]);
  for (const dep of Object.keys(manifest.dependencies)) {
    const link = join(dir, "node_modules", dep);
    await mkdir(dirname(link), { recursive: true });
    await symlink(join(ROOT, "node_modules", dep), link);
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "loomwork-pack-"));
  // npm pack runs the prepare script, which builds dist/ (as an install from git or a folder does).
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], { cwd: ROOT });
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  files = packed!.files.map((f) => f.path);
  project = join(work, "app");
  await unpackInto(project, join(work, packed!.filename));
  // The project's own xstate, another 5.x than the checkout's: where npm puts a peer, at the top.
  await mkdir(join(project, "node_modules", "xstate"), { recursive: true });
  await run("tar", [
    "-xzf",
    join(ROOT, "spec", "fixtures", "packaging", `xstate-${PROJECT_XSTATE}.tgz`),
    "-C",
    join(project, "node_modules", "xstate"),
    "--strip-components=1",
  ]);
  strict = join(work, "strict");
  await unpackInto(strict, join(work, packed!.filename));
  await symlink(join(ROOT, "node_modules", "xstate"), join(strict, "node_modules", "xstate"));
}, 120_000);

afterAll(() => rm(work, { recursive: true, force: true }));

const node = (args: string[]) => run(process.execPath, args, { cwd: project });

describe("the packed package", () => {
  it("ships the build, its types, the README and the LICENSE, and the sources its maps point at (no tests)", () => {
    for (const file of [
      "package.json",
      "README.md",
      "LICENSE",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/adapters/fs/index.js",
      "dist/adapters/indexeddb/index.js",
      "dist/cli/main.js",
      "dist/mcp.js",
      "dist/mcp.d.ts",
      "index.ts",
      "actors/app.ts",
    ]) {
      expect(files, file).toContain(file);
    }
    expect(files.filter((f) => f.endsWith(".test.ts") || f.startsWith("spec/"))).toEqual([]);
  });

  it("has declaration maps whose sources are in the package: go-to-definition lands in the .ts source", async () => {
    const maps = files.filter((f) => f.endsWith(".d.ts.map"));
    expect(maps).toContain("dist/adapters/postgres/index.d.ts.map");
    expect(maps.length).toBe(files.filter((f) => f.endsWith(".d.ts")).length);
    for (const map of maps) {
      const parsed = JSON.parse(await readFile(join(project, "node_modules", "loomwork", map), "utf8")) as {
        sources: string[];
      };
      expect(parsed.sources.length, map).toBeGreaterThan(0);
      for (const source of parsed.sources) {
        expect(files, `${map} -> ${source}`).toContain(posix.join(posix.dirname(map), source));
      }
    }
  });

  it("has source maps that carry their sources inline", async () => {
    const maps = files.filter((f) => f.endsWith(".js.map"));
    expect(maps.length).toBeGreaterThan(10);
    for (const map of maps) {
      const parsed = JSON.parse(await readFile(join(project, "node_modules", "loomwork", map), "utf8")) as {
        sources: string[];
        sourcesContent?: string[];
      };
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

  it("loads the role entries from CommonJS and ESM, and runs each on an app (ADR 0011: loomwork/lifecycle, loomwork/upgrades, loomwork/read-models)", async () => {
    const { stdout: cjs } = await node([
      "-e",
      'const l = require("loomwork/lifecycle"); const u = require("loomwork/upgrades"); const r = require("loomwork/read-models");' +
        'console.log([typeof l.sweep, typeof l.eraseSubject, typeof l.exportSubject, typeof l.archive, typeof u.checkReplay, typeof u.migrate, typeof r.createReadModels].join(" "))',
    ]);
    expect(cjs.trim()).toBe(Array(7).fill("function").join(" "));
    const script = [
      'import { createApp, defineConfig, memoryStores } from "loomwork";',
      'import { archive, exportSubject, sweep } from "loomwork/lifecycle";',
      'import { checkReplay } from "loomwork/upgrades";',
      'import { createReadModels } from "loomwork/read-models";',
      'import { createMachine } from "xstate";',
      'const machine = createMachine({ id: "m", initial: "a", states: { a: { type: "final" } } });',
      "const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));",
      'await app.start(machine, { executionId: "x", subject: "s" });',
      'await app.result("x");',
      "const models = createReadModels(app);",
      "await models.ready;",
      "const listed = models.list().map((v) => v.executionId).join();",
      'const exported = await exportSubject(app, "s");',
      "const swept = await sweep(app, { ttlMs: 0 });",
      'const archived = await archive(app, "x");',
      "const report = await checkReplay(app, machine);",
      "models.dispose();",
      'console.log([listed, exported.executions.length, swept.sweepId, archived.executionId, report.ok].join(" "));',
    ].join("\n");
    const { stdout: esm } = await node(["--input-type=module", "-e", script]);
    expect(esm.trim()).toBe("x 1 loom.sweep:1 x true");
  });

  it("loads loomwork/schedules from CommonJS and ESM (croner with it), and stores a cron schedule in a time zone", async () => {
    const { stdout: cjs } = await node([
      "-e",
      'const s = require("loomwork/schedules"); console.log([typeof s.schedule, typeof s.listSchedules, s.SCHEDULE_ON_TIME_MS].join(" "))',
    ]);
    expect(cjs.trim()).toBe("function function 10000");
    const script = [
      'import { createApp, defineConfig, memoryStores } from "loomwork";',
      'import { listSchedules, schedule } from "loomwork/schedules";',
      'import { createMachine } from "xstate";',
      'const machine = createMachine({ id: "m", initial: "a", states: { a: { type: "final" } } });',
      "const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));",
      'await schedule(app, machine, { id: "nightly", cron: "0 3 * * *", timezone: "Europe/Paris" });',
      "const [stored] = await listSchedules(app);",
      "await app.close();",
      'console.log([stored.id, new Date(stored.nextAt).getUTCHours() === 1 || new Date(stored.nextAt).getUTCHours() === 2].join(" "));',
    ].join("\n");
    const { stdout: esm } = await node(["--input-type=module", "-e", script]);
    expect(esm.trim()).toBe("nightly true");
  });

  it("loads loomwork/devtools from CommonJS and ESM, builds a model, and its installed CLI serves the page with nothing from elsewhere", async () => {
    const { stdout: cjs } = await node([
      "-e",
      'const d = require("loomwork/devtools"); console.log([typeof d.mountDevtools, typeof d.renderDevtools, typeof d.loadModel, typeof d.loadTree].join(" "))',
    ]);
    expect(cjs.trim()).toBe(Array(4).fill("function").join(" "));
    const script = [
      'import { createApp, defineConfig, memoryStores } from "loomwork";',
      'import { loadModel } from "loomwork/devtools";',
      'import { createMachine } from "xstate";',
      'const machine = createMachine({ id: "m", initial: "a", states: { a: { on: { GO: "b" } }, b: { type: "parallel", states: { x: {}, y: {} } } } });',
      "const stores = memoryStores();",
      "const app = createApp(defineConfig({ stores, effects: {} }));",
      'const actor = await app.start(machine, { executionId: "x" });',
      'await actor.sendAsync({ type: "GO" });',
      "await app.close();",
      'const model = await loadModel(stores.events, "x", { logics: [machine] });',
      'console.log(model.graph.nodes.map((n) => n.id).join(","), JSON.stringify(model.states.at(-1).value));',
    ].join("\n");
    const { stdout: esm } = await node(["--input-type=module", "-e", script]);
    expect(esm.trim()).toBe('m,m.a,m.b,m.b.x,m.b.y {"b":{"x":{},"y":{}}}');
    // The installed CLI serves the compiled page modules and elkjs from the package's own dependencies.
    const journal = await mkdtemp(join(work, "devtools-"));
    await mkdir(join(journal, "executions"));
    const child = spawn(
      process.execPath,
      [join("node_modules", "loomwork", "dist", "cli", "main.js"), "devtools", "--dir", journal, "--json"],
      { cwd: project, stdio: ["ignore", "pipe", "pipe"] },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          out += chunk;
          const found = /"url":\s*"([^"]+)"/.exec(out);
          if (found) resolve(found[1]!);
        });
        child.once("exit", (code) => reject(new Error(`devtools exited ${code} before printing its url: ${out}`)));
      });
      for (const path of ["", "assets/client.js", "assets/page.js", "assets/layout.js", "assets/view.js", "elk.js"]) {
        const response = await fetch(`${url}${path}`);
        expect(response.status, path).toBe(200);
        const text = await response.text();
        // Only relative imports: the browser resolves them against the server, nothing from a CDN or a package name.
        for (const [, specifier] of text.matchAll(/^import .* from "([^"]+)";?$/gm))
          expect(specifier, path).toMatch(/^\.\//);
      }
      expect(await (await fetch(`${url}api/executions`)).json()).toEqual([]);
    } finally {
      child.kill("SIGTERM");
    }
  }, 60_000);

  it("takes xstate as a peer with a range (one copy: the app's), and pins it exactly only for its own tests", async () => {
    const packed = JSON.parse(
      await readFile(join(project, "node_modules", "loomwork", "package.json"), "utf8"),
    ) as typeof manifest;
    expect(packed.dependencies.xstate).toBeUndefined();
    expect(packed.peerDependencies.xstate).toBe("^5.19.0");
    expect(manifest.devDependencies.xstate).toMatch(/^5\.\d+\.\d+$/);
    // loomwork's own modules resolve the project's xstate, and nothing nested under it could shadow it.
    const { stdout } = await node([
      "--input-type=module",
      "-e",
      'import { createRequire } from "node:module"; import { realpathSync } from "node:fs";' +
        'const fromLoomwork = createRequire(realpathSync("node_modules/loomwork/dist/index.js"));' +
        'console.log(fromLoomwork("xstate/package.json").version, fromLoomwork.resolve("xstate") === createRequire(process.cwd() + "/").resolve("xstate"))',
    ]);
    expect(stdout.trim()).toBe(`${PROJECT_XSTATE} true`);
    await expect(readdir(join(project, "node_modules", "loomwork", "node_modules"))).rejects.toMatchObject({
      code: "ENOENT",
    });
  });

  it("runs the agent loop and a machine of the app's xstate, and resumes, on the lowest xstate of the range", async () => {
    const script = [
      'import { agentLoop$, createApp, createLlmEffect, createToolEffect, defineConfig, effectActor, memoryStores, scriptedModel } from "loomwork";',
      'import { assign, setup } from "xstate";',
      "const stores = memoryStores();",
      'const loop = agentLoop$({ id: "r", model: "model", tools: ["search"] });',
      'const effects = { model: createLlmEffect(scriptedModel([{ toolCalls: [{ toolName: "search", input: { q: "owls" } }] }, { text: "by ear" }])), search: createToolEffect(async ({ q }) => [q]) };',
      'const mine = setup({ actors: { search: effectActor() } }).createMachine({ id: "mine", initial: "s", context: { hits: [] }, states: { s: { invoke: { src: "search", input: () => ({ q: "bats" }), onDone: { target: "d", actions: assign({ hits: ({ event }) => event.output }) } } }, d: { type: "final" } }, output: ({ context }) => context.hits });',
      "const app = createApp(defineConfig({ stores, effects, logics: [loop, mine] }));",
      'await app.start(loop, { executionId: "a", input: { prompt: "How do owls hunt?" } });',
      'await app.start(mine, { executionId: "b" });',
      'const outputs = [(await app.result("a")).text, (await app.result("b")).join()];',
      "await app.close();",
      "const again = createApp(defineConfig({ stores, effects, logics: [loop, mine] }));",
      "let calls = 0;",
      'again.on("step", () => calls++);',
      'const resumed = await again.resume("a");',
      'console.log(outputs.join(" | "), resumed.replay.stepsServedFromLog, (await again.result("a")).turns, calls);',
    ].join("\n");
    const { stdout } = await node(["--input-type=module", "-e", script]);
    expect(stdout.trim()).toBe("by ear | bats 3 2 0");
  });

  it("runs its CLI from the installed bin", async () => {
    const { stdout } = await node([join("node_modules", "loomwork", "dist", "cli", "main.js"), "--version"]);
    expect(stdout.trim()).toBe(manifest.version);
    expect((await readdir(join(project, "node_modules", "loomwork", "dist", "cli"))).length).toBeGreaterThan(3);
  });
  it("loads a TypeScript --logic (flow.mts) with the project's tsx under plain Node, and says to install tsx when there is none", async () => {
    const module = 'import { createMachine } from "xstate";\nexport const flow = createMachine({ id: "flow" });\n';
    for (const dir of [project, strict]) await writeFile(join(dir, "flow.mts"), module);
    const journal = await mkdtemp(join(work, "journal-"));
    await mkdir(join(journal, "executions")); // an empty journal: the check has nothing to replay
    const cli = (cwd: string) =>
      run(
        process.execPath,
        [
          join("node_modules", "loomwork", "dist", "cli", "main.js"),
          "replay-check",
          "--logic",
          "flow.mts",
          "--dir",
          journal,
        ],
        { cwd },
      ).then(
        (r) => ({ code: 0, stderr: "", stdout: r.stdout }),
        (e: { code?: number; stderr?: string; stdout?: string }) => ({
          code: e.code,
          stderr: String(e.stderr),
          stdout: String(e.stdout),
        }),
      );
    // No tsx in the strict project: exit 3, with the way out.
    const without = await cli(strict);
    expect(without.code).toBe(3);
    expect(without.stderr).toMatch(/cannot load --logic flow\.mts.*\n.*npm install -D tsx/s);
    // The project has tsx (linked from this checkout): the module loads, and the check runs.
    await symlink(join(ROOT, "node_modules", "tsx"), join(project, "node_modules", "tsx"));
    const withTsx = await cli(project);
    expect(withTsx.stderr, withTsx.stderr).not.toMatch(/cannot load/);
    expect(withTsx.code, withTsx.stderr).toBe(0);
  });
  it("type-checks in a strict project without skipLibCheck, loomwork/postgres (its pg types come with it) and loomwork/devtools included", async () => {
    await writeFile(
      join(strict, "package.json"),
      JSON.stringify({ name: "strict-app", private: true, type: "module" }),
    );
    const compilerOptions = {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      skipLibCheck: false,
      noEmit: true,
    };
    await writeFile(join(strict, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["app.ts"] }));
    await writeFile(
      join(strict, "app.ts"),
      [
        'import { createApp, defineConfig, memoryStores } from "loomwork";',
        'import { postgresStores } from "loomwork/postgres";',
        'import { sweep, type SweepResult } from "loomwork/lifecycle";',
        'import { checkReplay } from "loomwork/upgrades";',
        'import { createReadModels, type ReadModels } from "loomwork/read-models";',
        'import { mountDevtools, type DevtoolsPage } from "loomwork/devtools";',
        "export const devtools = (el: HTMLElement, a: typeof app): DevtoolsPage => mountDevtools(el, { stores: memoryStores(), app: a });",
        "export const maintain = (a: typeof app): Promise<SweepResult> => sweep(a, { ttlMs: 0 });",
        "export const check = (a: typeof app, logic: Parameters<typeof checkReplay>[1]) => checkReplay(a, logic);",
        "export const models = (a: typeof app): ReadModels => createReadModels(a);",
        "export const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));",
        "export const fleet = (url: string) => postgresStores({ url });",
      ].join("\n"),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const result = await run(process.execPath, [tsc, "-p", "."], { cwd: strict }).catch(
      (error: { stdout: string }) => error,
    );
    expect(result.stdout).toBe("");
  }, 60_000);
});
