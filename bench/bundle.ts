// Measurement: the browser bundle of a minimal agent app (issue 18). bench/bundle/minimalApp.ts (an
// agentLoop$ on a model, indexedDbStores, app.start) is bundled for the browser, minified, with esbuild
// (tsx's, already installed) and, as a cross-check, with Vite 8 (rolldown), the bundler the browser
// story uses. Sizes are exact bytes: minified, and gzipped at level 9. The largest parts are esbuild's
// per-module bytes in the minified output. The same app with the live catalogue view (watchExecutions,
// the one part on Dexie) is measured beside it, to show what the view costs when it is imported. The
// minimal app's esbuild bundle is run too (a fresh Node over fake-indexeddb): any chunk its run loads beyond
// the start chunks is counted with them.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { build as esbuild, type Metafile, type Plugin } from "esbuild";
import { build as viteBuild, type Rollup } from "vite";
import type { BenchOptions } from "./options.js";
import { bytes, type Goal, type Section, type Table } from "./report.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const APPS = {
  minimal: join(ROOT, "bench", "bundle", "minimalApp.ts"),
  liveView: join(ROOT, "bench", "bundle", "liveViewApp.ts"),
};
/** The issue's goal for the minimal app, gzipped. */
export const BUNDLE_GOAL_GZIP = 50_000;

// What the role entries hold (loomwork/lifecycle, loomwork/upgrades, loomwork/read-models, ADR 0011): an app
// that does not import them must not bundle any of it (spec/indexeddb/bundle.test.ts).
export const ROLE_ENTRY_MODULES = [
  /^(lifecycle|upgrades|readModels|schedules)\.ts$/,
  /^actors\/schedules\//,
  /^croner\//,
  /^actors\/lifecycle\/(functions|standalone|joins|export|retention)\.ts$/,
  /^actors\/journal\/(replayCheck|migrate|upgrades|readModels|appReadModels)\.ts$/,
  /^@xstate\/store\//,
];
// The maintenance machines and their internal effects: at start because a fresh app's resumeUnfinished
// finishes a crashed sweep or erasure (actors/app.ts imports actors/lifecycle/maintenance.ts, ADR 0011).
const MAINTENANCE = [/^actors\/lifecycle\/maintenance\.ts$/];
// The code of rarely used roles (lifecycle, upgrades, fleet submit, sealing, claim-check, the ring's configured
// layers, redaction, retry decisions, the stream buffer): what entry points by role (issue 32) can leave out of
// an app that does not import it. Measured wherever it is found in the start chunks.
const RARE_ROLES = [
  /^actors\/lifecycle\/(erase|sweep|export|retention|internalEffects|erasureStatus|citations|errors)\.ts$/,
  /^actors\/journal\/(replayCheck|migrate|unfinished|sealing)\.ts$/,
  /^actors\/fleet\/submit\.ts$/,
  /^actors\/effects\/(claimCheck|claimCheckPreset|ringLayers|retry|redaction)\.ts$/,
  /^actors\/agents\/(retryableErrors|streamBuffer|uiMessageStream)\.ts$/,
  /^machines\/(sweep|eraseCoordinator)\.ts$/,
  /^stores\/(recordSealing|sealingErrors)\.ts$/,
];

export interface BundleSize {
  minified: number;
  gzipped: number;
  /** How many chunks load at start (each gzipped on its own). */
  chunks: number;
  /** Minified bytes per input module loaded at start, largest first. */
  modules: { module: string; bytes: number }[];
  /** The chunks reached only by a dynamic `import()`: how many, and their summed sizes. */
  lazy: { chunks: number; minified: number; gzipped: number };
  /** Those of them the app's run loaded when the bundle was run (`runLoads`): counted in the sizes above. */
  lazyLoadedByRun: string[];
}

/**
 * Runs the bundled app (`files`: output path -> code, `entry` one of them) in a fresh Node process over
 * fake-indexeddb, and returns the output files its run loaded: whatever it imports, statically or by
 * `import()`, is in the V8 coverage of the process (NODE_V8_COVERAGE), one script per chunk evaluated.
 */
export function runLoads(files: Map<string, Uint8Array>, entry: string): Set<string> {
  const dir = mkdtempSync(join(tmpdir(), "loomwork-bundle-"));
  try {
    for (const [path, code] of files) {
      mkdirSync(dirname(join(dir, "out", path)), { recursive: true });
      writeFileSync(join(dir, "out", path), code);
    }
    const fakeIndexedDb = pathToFileURL(join(ROOT, "node_modules", "fake-indexeddb", "auto", "index.mjs")).href;
    const script = `await import(${JSON.stringify(fakeIndexedDb)}); await import(${JSON.stringify(pathToFileURL(join(dir, "out", entry)).href)});`;
    execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      env: { ...process.env, NODE_V8_COVERAGE: join(dir, "coverage") },
      stdio: ["ignore", "ignore", "inherit"],
    });
    const prefix = pathToFileURL(join(dir, "out")).href + "/";
    const loaded = new Set<string>();
    for (const name of readdirSync(join(dir, "coverage"))) {
      const coverage: { result: { url: string }[] } = JSON.parse(readFileSync(join(dir, "coverage", name), "utf8"));
      for (const { url } of coverage.result) if (url.startsWith(prefix)) loaded.add(url.slice(prefix.length));
    }
    return loaded;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Makes every module whose repository path or package name matches one of `patterns` external: left out of the output. */
function leaveOutPlugin(patterns: RegExp[]): Plugin {
  return {
    name: "leave-out",
    setup(build) {
      build.onResolve({ filter: /.*/ }, ({ path, resolveDir, kind }) => {
        if (kind === "entry-point") return undefined;
        const module = path.startsWith(".") ? relative(ROOT, join(resolveDir, path)).replace(/\.js$/, ".ts") : path;
        return patterns.some((pattern) => pattern.test(module)) ? { path, external: true } : undefined;
      });
    },
  };
}

const gzip = (code: Uint8Array | string) => gzipSync(code, { level: 9 }).length;

/** A readable name for a module: `dexie`, `xstate/dist/raise-….js`, or a path in this repository. */
function moduleName(path: string): string {
  const inModules = path.lastIndexOf("node_modules/");
  return inModules >= 0 ? path.slice(inModules + "node_modules/".length) : path;
}

/**
 * Bundles `entry` with esbuild for the browser, minified, split into chunks as an app's bundler does, and
 * returns the sizes of what loads at start: the entry chunk and the chunks it imports statically. Chunks
 * reached only by a dynamic `import()` are summed apart in `lazy`. With `run`, the bundle is also run
 * (`runLoads`) and every such chunk its run loads is counted with the start chunks.
 */
export async function esbuildSize(
  entry: string,
  { run = false, leaveOut = [] }: { run?: boolean; leaveOut?: RegExp[] } = {},
): Promise<BundleSize> {
  const result = await esbuild({
    // `leaveOut`: modules kept out of the bundle (external), to measure what the start would be without them.
    plugins: leaveOut.length === 0 ? [] : [leaveOutPlugin(leaveOut)],
    entryPoints: [entry],
    bundle: true,
    splitting: true,
    outdir: join(ROOT, "bench", "bundle", "out"),
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    metafile: true,
    absWorkingDir: ROOT,
    logLevel: "silent",
  });
  const metafile: Metafile = result.metafile;
  // A dynamic import() is an entry point of its own in the metafile: the app's entry is the one named.
  const entryOutput = Object.keys(metafile.outputs).find(
    (path) => metafile.outputs[path]!.entryPoint === relative(ROOT, entry),
  );
  if (entryOutput === undefined) throw new Error(`esbuild produced no output for ${entry}`);
  // The chunks loaded at start: the entry and, transitively, its static imports.
  const initial = new Set<string>();
  const visit = (path: string) => {
    if (initial.has(path)) return;
    initial.add(path);
    for (const dep of metafile.outputs[path]!.imports)
      if (dep.kind === "import-statement" && !dep.external) visit(dep.path);
  };
  visit(entryOutput);
  const contents = new Map(result.outputFiles.map((file) => [relative(ROOT, file.path), file.contents]));
  // Every chunk the app's run loads counts: one reached by a dynamic import() that the run loads joins the start chunks.
  const outDir = relative(ROOT, join(ROOT, "bench", "bundle", "out"));
  const byRun = !run
    ? []
    : [
        ...runLoads(
          new Map([...contents].map(([path, code]) => [relative(outDir, path), code])),
          relative(outDir, entryOutput),
        ),
      ].map((name) => join(outDir, name));
  const lazyLoadedByRun = byRun.filter((path) => !initial.has(path));
  for (const path of lazyLoadedByRun) initial.add(path);
  const sizeOf = (paths: string[]) => {
    const files = paths.map((path) => contents.get(path)!);
    return { minified: files.reduce((n, f) => n + f.length, 0), gzipped: files.reduce((n, f) => n + gzip(f), 0) };
  };
  const modules = [...initial]
    .flatMap((path) => Object.entries(metafile.outputs[path]!.inputs))
    .map(([path, input]) => ({ module: moduleName(path), bytes: input.bytesInOutput }))
    .filter((m) => m.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
  const lazy = Object.keys(metafile.outputs).filter((path) => !initial.has(path) && path.endsWith(".js"));
  return {
    ...sizeOf([...initial]),
    chunks: initial.size,
    modules,
    lazy: { chunks: lazy.length, ...sizeOf(lazy) },
    lazyLoadedByRun,
  };
}

/** Bundles `entry` with Vite (rolldown), minified, without writing; returns the sizes of the chunks loaded at start. */
export async function viteSize(
  entry: string,
): Promise<{ minified: number; gzipped: number; chunks: number; lazyModules: string[] }> {
  const result = await viteBuild({
    configFile: false,
    logLevel: "silent",
    root: dirname(entry),
    build: {
      write: false,
      target: "es2022",
      minify: true,
      reportCompressedSize: false,
      rollupOptions: { input: entry },
    },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Rollup.RollupOutput[];
  const all = outputs.flatMap((o) => o.output).filter((c): c is Rollup.OutputChunk => c.type === "chunk");
  // What loads at start: the entry chunk and, transitively, its static imports (not the dynamic ones).
  const byName = new Map(all.map((c) => [c.fileName, c]));
  const chunks = new Set<Rollup.OutputChunk>();
  const visit = (chunk: Rollup.OutputChunk) => {
    if (chunks.has(chunk)) return;
    chunks.add(chunk);
    for (const name of chunk.imports) if (byName.has(name)) visit(byName.get(name)!);
  };
  for (const chunk of all) if (chunk.isEntry) visit(chunk);
  // The modules only chunks reached by a dynamic import() hold, named as esbuild's metafile names them.
  const atStart = new Set([...chunks].flatMap((c) => Object.keys(c.modules)));
  const lazyModules = all
    .filter((c) => !chunks.has(c))
    .flatMap((c) => Object.keys(c.modules))
    .filter((id) => !atStart.has(id));
  return {
    minified: [...chunks].reduce((n, c) => n + Buffer.byteLength(c.code), 0),
    gzipped: [...chunks].reduce((n, c) => n + gzip(c.code), 0),
    chunks: chunks.size,
    lazyModules: [...new Set(lazyModules.map((id) => moduleName(relative(ROOT, id))))],
  };
}

/** Sums module bytes by area: a package, or a top-level directory of this repository (`actors/journal`). */
function byArea(modules: BundleSize["modules"]): { area: string; bytes: number }[] {
  const areas = new Map<string, number>();
  for (const { module, bytes: n } of modules) {
    const parts = module.split("/");
    const area = module.startsWith("@")
      ? parts.slice(0, 2).join("/")
      : module.includes("/dist/") || module.includes("/build/")
        ? parts[0]!
        : relative(ROOT, join(ROOT, module))
            .split("/")
            .slice(0, parts.length > 2 ? 2 : 1)
            .join("/");
    areas.set(area, (areas.get(area) ?? 0) + n);
  }
  return [...areas].map(([area, n]) => ({ area, bytes: n })).sort((a, b) => b.bytes - a.bytes);
}

export async function measureBundle(_options: BenchOptions): Promise<Section> {
  const minimal = await esbuildSize(APPS.minimal, { run: true });
  const liveView = await esbuildSize(APPS.liveView);
  const viteMinimal = await viteSize(APPS.minimal);
  const dexieIn = (size: BundleSize) =>
    size.modules.filter((m) => m.module.startsWith("dexie/")).reduce((n, m) => n + m.bytes, 0);
  const sizes: Table = {
    caption: "The minimal agent app (`loomwork` + `loomwork/indexeddb`), bundled for the browser and minified",
    head: ["app", "bundler", "chunks", "minified", "gzipped", "of it Dexie (minified)"],
    rows: [
      [
        "minimal agent app (start chunks, and any chunk its run loads)",
        "esbuild",
        String(minimal.chunks),
        bytes(minimal.minified),
        bytes(minimal.gzipped),
        bytes(dexieIn(minimal)),
      ],
      [
        "reached only by a dynamic `import()` (not loaded at start)",
        "esbuild",
        String(minimal.lazy.chunks),
        bytes(minimal.lazy.minified),
        bytes(minimal.lazy.gzipped),
        "-",
      ],
      [
        "minimal agent app (start chunks)",
        "vite 8 (rolldown)",
        String(viteMinimal.chunks),
        bytes(viteMinimal.minified),
        bytes(viteMinimal.gzipped),
        "-",
      ],
      [
        "the same + watchExecutions (live view)",
        "esbuild",
        String(liveView.chunks),
        bytes(liveView.minified),
        bytes(liveView.gzipped),
        bytes(dexieIn(liveView)),
      ],
    ],
    align: ["l", "l", "r", "r", "r", "r"],
  };
  const areas: Table = {
    caption: "Largest parts of the minimal app (esbuild's minified bytes per module, summed by package or directory)",
    head: ["part", "minified", "share"],
    rows: byArea(minimal.modules)
      .slice(0, 16)
      .map((a) => [a.area, bytes(a.bytes), `${((100 * a.bytes) / minimal.minified).toFixed(1)}%`]),
  };
  const modules: Table = {
    caption: "Largest modules of the minimal app (minified bytes)",
    head: ["module", "minified"],
    rows: minimal.modules.slice(0, 20).map((m) => [m.module, bytes(m.bytes)]),
  };
  // Met when both bundlers' start is within the goal.
  const met = minimal.gzipped <= BUNDLE_GOAL_GZIP && viteMinimal.gzipped <= BUNDLE_GOAL_GZIP;
  // The rare roles' code at start: what entry points by role can leave out.
  const rareRoles = minimal.modules.filter((m) => RARE_ROLES.some((pattern) => pattern.test(m.module)));
  const rareRolesBytes = rareRoles.reduce((n, m) => n + m.bytes, 0);
  const rareRolesTable: Table = {
    caption:
      "The rarely used roles' code still in the minimal app's start (the maintenance machines a resume may need, fleet submit, sealing, claim-check, the capability ring's configured layers, redaction, retry decisions, the stream buffer): kept by methods the App still has",
    head: ["module", "minified (esbuild)"],
    rows: [
      ...rareRoles.slice(0, 12).map((m) => [m.module, bytes(m.bytes)]),
      [`all ${rareRoles.length}`, bytes(rareRolesBytes)],
    ],
  };
  const roleEntries = minimal.modules.filter((m) => ROLE_ENTRY_MODULES.some((pattern) => pattern.test(m.module)));
  const xstateBytes = minimal.modules.filter((m) => m.module.startsWith("xstate/")).reduce((n, m) => n + m.bytes, 0);
  // How far leaving code out could go: the start with those modules left out of the bundle (and what only they
  // import with them), measured, not estimated.
  const exactly = (names: string[]) =>
    names.map((name) => new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
  const withoutMaintenance = await esbuildSize(APPS.minimal, { leaveOut: MAINTENANCE });
  const withoutRareRoles = await esbuildSize(APPS.minimal, { leaveOut: exactly(rareRoles.map((m) => m.module)) });
  const counterfactual: Table = {
    caption:
      "How far leaving code out could take the minimal app: its esbuild start with modules left out of the bundle (external), measured",
    head: ["left out", "minified", "gzipped", `≤ ${bytes(BUNDLE_GOAL_GZIP)}`],
    rows: [
      ["nothing (the app as it is)", minimal, minimal.gzipped <= BUNDLE_GOAL_GZIP],
      [
        "the maintenance machines and their internal effects (what a fresh app's resumeUnfinished needs to finish a crashed sweep or erasure)",
        withoutMaintenance,
        withoutMaintenance.gzipped <= BUNDLE_GOAL_GZIP,
      ],
      [
        "the rare roles' code still at start (the table above)",
        withoutRareRoles,
        withoutRareRoles.gzipped <= BUNDLE_GOAL_GZIP,
      ],
    ].map(([what, size, within]) => [
      what as string,
      bytes((size as BundleSize).minified),
      bytes((size as BundleSize).gzipped),
      within ? "yes" : "no",
    ]),
    align: ["l", "r", "r", "l"],
  };
  const goals: Goal[] = [
    {
      goal: `minimal agent app (loomwork + loomwork/indexeddb) ≤ ${bytes(BUNDLE_GOAL_GZIP)} gzipped`,
      met,
      detail: `${bytes(minimal.gzipped)} gzipped, ${bytes(minimal.minified)} minified (esbuild); vite ${bytes(viteMinimal.gzipped)} gzipped; Dexie ${dexieIn(minimal) === 0 ? "not in it" : bytes(dexieIn(minimal))}`,
    },
  ];
  return {
    id: "bundle",
    title: "Browser bundle of a minimal agent app",
    method: [
      "`bench/bundle/minimalApp.ts` (an `agentLoop$` on a scripted model, `indexedDbStores`, `app.start`) bundled for the browser (ESM, es2022, minified) by esbuild and by Vite 8 (rolldown); gzip level 9. Exact bytes.",
      'The package is `"sideEffects": false` and the journal announces catalogue changes without Dexie (`adapters/indexeddb/catalogueChanges.ts`), so Dexie is in the bundle only when the live catalogue view is imported (ADR 0007).',
    ],
    tables: [sizes, areas, modules, rareRolesTable, counterfactual],
    goals,
    notes: [
      `Sizes are what loads at start: the entry chunk and the chunks it imports statically, each gzipped on its own (as a server sends them). The esbuild bundle is also run, in a fresh Node process over fake-indexeddb (\`runLoads\`): every chunk its run loads is counted; this run loaded ${minimal.lazyLoadedByRun.length === 0 ? "none beyond the start chunks" : `${minimal.lazyLoadedByRun.length} chunk(s) reached only by a dynamic \`import()\`, counted above`}. The bundle has ${minimal.lazy.chunks === 0 ? "no chunk" : `${minimal.lazy.chunks} chunk(s)`} reached only by a dynamic \`import()\`.`,
      met
        ? `Met: the start is ${bytes(minimal.gzipped)} gzipped with esbuild and ${bytes(viteMinimal.gzipped)} with Vite, both at or under ${bytes(BUNDLE_GOAL_GZIP)}.`
        : `Missed: the start is ${bytes(minimal.gzipped)} gzipped with esbuild and ${bytes(viteMinimal.gzipped)} with Vite, against ${bytes(BUNDLE_GOAL_GZIP)}. ` +
          `Of its ${bytes(minimal.minified)} minified (esbuild), ${Math.round((100 * (minimal.minified - rareRolesBytes)) / minimal.minified)}% is not the rare roles' code: the runtime the app runs, xstate (${bytes(xstateBytes)} minified), the journal, the effect chain, the agent loop and the IndexedDB adapter (the parts above, largest first).` +
          (rareRolesBytes > 0
            ? ` The rare roles' code still at start is ${bytes(rareRolesBytes)} minified (the table above); left out of the bundle altogether it would bring the esbuild start to ${bytes(withoutRareRoles.gzipped)} gzipped, the maintenance machines alone to ${bytes(withoutMaintenance.gzipped)}.`
            : ""),
      `The role entries' code (loomwork/lifecycle, loomwork/upgrades, loomwork/read-models): ${roleEntries.length === 0 ? "none of it is in the minimal app" : `${roleEntries.length} module(s) in the minimal app: ${roleEntries.map((m) => m.module).join(", ")}`}.`,
      `Vite's start is ${viteMinimal.chunks} chunk(s)${viteMinimal.lazyModules.length === 0 ? "; no module is only in a chunk reached by a dynamic `import()`" : `; ${viteMinimal.lazyModules.length} module(s) only in chunks reached by a dynamic \`import()\`: ${viteMinimal.lazyModules.join(", ")}`}.`,
    ],
    raw: {
      minimal,
      liveView,
      viteMinimal,
      withoutMaintenance: withoutMaintenance.gzipped,
      withoutRareRoles: withoutRareRoles.gzipped,
    },
  };
}
