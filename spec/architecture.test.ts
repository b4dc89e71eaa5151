// The source tree keeps the shape docs/adr/0005-layout.md decides and docs/architecture.md maps:
// no import cycles (type imports included), small files, few casts in actors/, and pure machines
// that import nothing but xstate and their helpers. Each check prints its figure.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SOURCE_FOLDERS = ["actors", "machines", "stores", "adapters", "cli"];

/** Repository-relative, "/"-separated paths of every source file (`.ts`, not `.d.ts`). */
function sourceFiles(): string[] {
  // The package's entries at the root: the main one and the role entries (docs/adr/0011-entry-points-by-role.md).
  const files: string[] = ["index.ts", "lifecycle.ts", "upgrades.ts", "readModels.ts", "schedules.ts"].filter((entry) =>
    existsSync(join(ROOT, entry)),
  );
  const walk = (folder: string): void => {
    for (const name of readdirSync(join(ROOT, folder)).sort()) {
      const path = posix.join(folder, name);
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) files.push(path);
    }
  };
  for (const folder of SOURCE_FOLDERS) walk(folder);
  return files;
}

const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");

/** What a module of `path` keeps or does at load: top-level `let`/`var`, a `new Map/Set/WeakMap/WeakSet/Array`, a bare statement. */
function moduleState(path: string): string[] {
  const source = ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) {
      const mutable =
        (statement.declarationList.flags & (ts.NodeFlags.Let | ts.NodeFlags.Const)) !== ts.NodeFlags.Const;
      for (const declaration of statement.declarationList.declarations) {
        const name = declaration.name.getText(source);
        const init = declaration.initializer;
        if (mutable)
          found.push(`${path}: ${ts.NodeFlags.Let & statement.declarationList.flags ? "let" : "var"} ${name}`);
        else if (
          init &&
          ts.isNewExpression(init) &&
          /^(Map|Set|WeakMap|WeakSet|Array)$/.test(init.expression.getText(source))
        )
          found.push(`${path}: const ${name} = new ${init.expression.getText(source)}`);
      }
    } else if (ts.isExpressionStatement(statement)) {
      found.push(`${path}: ${statement.getText(source).slice(0, 60)}`);
    }
  }
  return found;
}

// `import ... from "x"`, `import type ... from "x"`, `export ... from "x"`, `export type ... from "x"`
// (over several lines too) and the bare `import "x"`; dynamic `import()` is not a static edge.
const IMPORT_FROM = /^\s*(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']/gm;
const BARE_IMPORT = /^\s*import\s*["']([^"']+)["']/gm;

/** Every module specifier a file imports or re-exports, in source order. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const rx of [IMPORT_FROM, BARE_IMPORT]) for (const m of source.matchAll(rx)) found.push(m[1]!);
  return found;
}

/** The repository file a relative specifier names (`./x.js` is `./x.ts`), or undefined. */
function resolve(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const stem = base.replace(/\.(js|ts)$/, "");
  for (const candidate of [`${stem}.ts`, base, `${stem}/index.ts`]) {
    if (candidate.endsWith(".ts") && existsSync(join(ROOT, candidate))) return candidate;
  }
  return undefined;
}

type Graph = Map<string, string[]>;

function importGraph(files: string[]): Graph {
  const graph: Graph = new Map();
  for (const file of files) {
    const deps = new Set<string>();
    for (const specifier of specifiers(read(file))) {
      const target = resolve(file, specifier);
      if (target !== undefined) deps.add(target);
    }
    graph.set(file, [...deps].sort());
  }
  return graph;
}

/** Tarjan's strongly connected components; a cycle is a component of two or more files, or a self-import. */
function cycles(graph: Graph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (;;) {
      const w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Lines as an editor counts them (a final newline does not start a line). */
const lineCount = (source: string): number => source.replace(/\n$/, "").split("\n").length;

/** Type assertions (`x as T`, `<T>x`); `as const` is a const assertion, not a cast, and is not counted. */
function casts(path: string): number {
  const file = ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  let count = 0;
  const visit = (node: ts.Node): void => {
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      const type = node.type;
      const isConst = ts.isTypeReferenceNode(type) && type.typeName.getText(file) === "const";
      if (!isConst) count += 1;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return count;
}

/**
 * The run-time `import()` calls of `path` (type positions such as `typeof import("x")` are not calls), each
 * with its specifier (or the expression when it is not a string literal) and its line.
 */
function dynamicImports(path: string, source = read(path)): { specifier: string; literal: boolean; line: number }[] {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { specifier: string; literal: boolean; line: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const argument = node.arguments[0];
      const literal = argument !== undefined && ts.isStringLiteralLike(argument);
      found.push({
        specifier: literal ? argument.text : (argument?.getText(file) ?? ""),
        literal,
        line: file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

const files = sourceFiles();
const inFolder =
  (folder: string) =>
  (path: string): boolean =>
    path.startsWith(`${folder}/`);

describe("architecture", () => {
  it("finds the source tree", () => {
    // A walk that found nothing would pass every check below.
    expect(files).toContain("actors/app.ts");
    expect(files).toContain("machines/agentLoop.ts");
    expect(files.length).toBeGreaterThan(50);
    expect(specifiers('import type { A } from "./a.js";\nexport {\n  b,\n} from "../b.js";\nimport "./c.js";')).toEqual(
      ["./a.js", "../b.js", "./c.js"],
    );
    expect(
      cycles(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", ["a"]],
          ["d", ["d"]],
          ["e", ["a"]],
        ]),
      ),
    ).toEqual([["a", "b", "c"], ["d"]]);
    expect(
      dynamicImports(
        "t.ts",
        'type B = typeof import("./b.js");\nconst a = await import("./a.js");\nawait import(name);',
      ),
    ).toEqual([
      { specifier: "./a.js", literal: true, line: 2 },
      { specifier: "name", literal: false, line: 3 },
    ]);
  });

  it("never import()s the runtime's own code at run time: an offline page fetches nothing after it loaded (ADR 0010)", () => {
    // The runtime is everything a browser bundle can hold: all but cli/, a Node command that loads its
    // commands' code from disk. A specifier that is not a string literal could name anything: counted too.
    const own = (d: { specifier: string; literal: boolean }) => !d.literal || d.specifier.startsWith(".");
    const found = (folder: (path: string) => boolean) =>
      files.filter(folder).flatMap((file) =>
        dynamicImports(file)
          .filter(own)
          .map((d) => `${file}:${d.line} import(${d.specifier})`),
      );
    const runtime = found((path) => !inFolder("cli")(path));
    const cli = found(inFolder("cli"));
    console.log(
      `run-time import() of the runtime's own code: ${runtime.length} in the runtime (bound: 0), ${cli.length} in cli/ (Node, from disk)`,
    );
    for (const d of runtime) console.log(`  ${d}`);
    expect(runtime).toEqual([]);
  });

  it("has no import cycles among the source files, type imports included", () => {
    const graph = importGraph(files);
    const edges = [...graph.values()].reduce((sum, deps) => sum + deps.length, 0);
    const found = cycles(graph);
    console.log(`import cycles: ${found.length} (${graph.size} files, ${edges} edges)`);
    for (const cycle of found) console.log(`  cycle of ${cycle.length}: ${cycle.join(", ")}`);
    expect(found, `import cycles:\n${found.map((c) => `  ${c.join(" <-> ")}`).join("\n")}`).toEqual([]);
  });

  it("has no import cycles when the run-time import() edges (cli/ loading its commands) are counted too", () => {
    const graph = importGraph(files);
    let dynamic = 0;
    for (const file of files) {
      for (const { specifier, literal } of dynamicImports(file)) {
        const target = literal ? resolve(file, specifier) : undefined;
        if (target === undefined) continue;
        dynamic += 1;
        graph.set(file, [...new Set([...(graph.get(file) ?? []), target])].sort());
      }
    }
    const found = cycles(graph);
    console.log(`import cycles, static and dynamic edges: ${found.length} (${dynamic} dynamic edges)`);
    for (const cycle of found) console.log(`  cycle of ${cycle.length}: ${cycle.join(", ")}`);
    expect(dynamic).toBeGreaterThan(0);
    expect(found, `import cycles:\n${found.map((c) => `  ${c.join(" <-> ")}`).join("\n")}`).toEqual([]);
  });

  // File size is a figure, not a cap (STYLE.md habit 2): the formatter decides the layout, files are cut where
  // their concept ends, and this prints the sizes as formatted so a growing file is seen in every run.
  it("prints the size of every source file as the formatter lays it out (a figure, not a cap)", () => {
    const sizes = files.map((path) => ({ path, lines: lineCount(read(path)) })).sort((a, b) => b.lines - a.lines);
    const folders = new Map<string, { files: number; lines: number }>();
    for (const { path, lines } of sizes) {
      const folder = path.includes("/") ? path.slice(0, path.indexOf("/")) : ".";
      const sum = folders.get(folder) ?? { files: 0, lines: 0 };
      folders.set(folder, { files: sum.files + 1, lines: sum.lines + lines });
    }
    const total = sizes.reduce((sum, s) => sum + s.lines, 0);
    console.log(`source files: ${sizes.length}, ${total} lines (formatted by Prettier, npm run format)`);
    for (const [folder, sum] of [...folders].sort((a, b) => b[1].lines - a[1].lines)) {
      console.log(
        `  ${folder}/: ${sum.files} files, ${sum.lines} lines, median ${median(sizes.filter((s) => (s.path.includes("/") ? s.path.slice(0, s.path.indexOf("/")) : ".") === folder).map((s) => s.lines))}`,
      );
    }
    console.log("largest files:");
    for (const s of sizes.slice(0, 12)) console.log(`  ${s.path}: ${s.lines}`);
    expect(sizes.every((s) => s.lines > 0)).toBe(true);
    expect(total).toBeGreaterThan(0);
  });

  it("has fewer than 15 `as` casts in actors/", () => {
    const perFile = files
      .filter(inFolder("actors"))
      .map((path) => ({ path, casts: casts(path) }))
      .filter((f) => f.casts > 0)
      .sort((a, b) => b.casts - a.casts);
    const total = perFile.reduce((sum, f) => sum + f.casts, 0);
    console.log(`as casts in actors/: ${total} (bound: under 15)`);
    for (const f of perFile) console.log(`  ${f.path}: ${f.casts}`);
    expect(total, perFile.map((f) => `${f.path}: ${f.casts}`).join("\n")).toBeLessThan(15);
  });

  it("lets machines/ import only xstate and machines/helpers/", () => {
    const wrong: string[] = [];
    for (const file of files.filter(inFolder("machines"))) {
      for (const specifier of specifiers(read(file))) {
        if (specifier === "xstate") continue;
        const target = resolve(file, specifier);
        if (target !== undefined && inFolder("machines/helpers")(target)) continue;
        wrong.push(`${file} imports ${target ?? specifier}`);
      }
    }
    console.log(`machines/ imports outside xstate and machines/helpers/: ${wrong.length}`);
    for (const w of wrong) console.log(`  ${w}`);
    expect(wrong).toEqual([]);
  });

  it("keeps machines/ free of module state but the patch scope: no top-level let, mutable collection or statement run at load", () => {
    const found = files.filter(inFolder("machines")).flatMap((file) => moduleState(file));
    // XState hands a guard only context and event: the planner reaches `patched` guards through this one slot.
    const allowed = ["machines/helpers/patches.ts: let current"];
    console.log(`module state in machines/: ${found.length} (allowed: ${allowed.join(", ")})`);
    expect(found).toEqual(allowed);
  });

  it("lets stores/ import nothing above it (actors/, machines/, adapters/, cli/, index.ts)", () => {
    const graph = importGraph(files.filter(inFolder("stores")));
    const wrong = [...graph].flatMap(([file, deps]) =>
      deps.filter((d) => !inFolder("stores")(d)).map((d) => `${file} imports ${d}`),
    );
    console.log(`stores/ imports from above: ${wrong.length}`);
    expect(wrong).toEqual([]);
  });
});
