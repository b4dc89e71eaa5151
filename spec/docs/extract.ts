// Extracts the TypeScript blocks of README.md and docs/*.md, so that spec/docs/docs.test.ts type-checks
// every one (one TypeScript program over all of them) and runs the ones that can run (in a temporary
// directory, offline). The import specifiers of the package (`loomwork`, `loomwork/fs`, ...) are
// rewritten, on the same line, to the checkout's sources, so a block's line N is line N of the file
// written for it, and every error is reported as `docs/<page>.md:<line>:<column>`.
//
// A block's info string says what is done with it:
//   ```ts            type-checked and run
//   ```ts check      type-checked only (it needs a network, a server, a browser, an Electron process)
//   ```ts fragment   neither: a piece of a larger program (an object's property, a call's options)
// A block that imports `loomwork/postgres`, `loomwork/indexeddb`, `loomwork/react` or `electron`, or is
// `tsx`, is type-checked only without saying so: it cannot run in plain Node.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

export type BlockMode = "run" | "check" | "fragment";

export interface DocBlock {
  /** The page, relative to the checkout (`docs/agents.md`). */
  doc: string;
  /** The 1-based line of the page that holds the block's first line of code. */
  line: number;
  lang: "ts" | "tsx";
  mode: BlockMode;
  /** Why a block is not run, when it is not (its marker, or what it imports). */
  reason?: string;
  code: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)\s*(.*)$/;
const TS_LANGS: Record<string, "ts" | "tsx"> = { ts: "ts", typescript: "ts", tsx: "tsx" };
/**
 * Packages the docs name that this checkout installs under another name: `@ai-sdk/openai-compatible` is
 * installed once per major (ai 5, 6, 7) as `ai-sdk-openai-compatible-v1/v2/v3`, and `ai` 7 as `ai-v7` (`ai`
 * is 5.x here); the docs mean the newest.
 */
export const INSTALLED_AS: Record<string, string> = {
  "@ai-sdk/openai-compatible": "ai-sdk-openai-compatible-v3",
  ai: "ai-v7",
};
const CHECK_ONLY_IMPORTS = ["loomwork/postgres", "loomwork/indexeddb", "loomwork/react", "electron"];

/** The fenced TypeScript blocks of one Markdown text, in order. */
export function extractBlocks(markdown: string, doc: string): DocBlock[] {
  const lines = markdown.split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang, rest] = open;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence!)) end++;
    const tsLang = TS_LANGS[lang!.toLowerCase()];
    if (tsLang) {
      const code = lines
        .slice(i + 1, end)
        .map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l))
        .join("\n");
      const flags = rest!.split(/\s+/).filter(Boolean);
      const block: DocBlock = { doc, line: i + 2, lang: tsLang, mode: "run", code };
      if (flags.includes("fragment")) Object.assign(block, { mode: "fragment", reason: "marked fragment" });
      else if (flags.includes("check")) Object.assign(block, { mode: "check", reason: "marked check" });
      else if (tsLang === "tsx") Object.assign(block, { mode: "check", reason: "JSX (renders in a DOM)" });
      else {
        const bound = CHECK_ONLY_IMPORTS.find((spec) => importsOf(code).includes(spec));
        if (bound) Object.assign(block, { mode: "check", reason: `imports ${bound}` });
      }
      const unknown = flags.filter((f) => f !== "fragment" && f !== "check");
      if (unknown.length > 0)
        throw new Error(`${doc}:${i + 1}: unknown block marker ${unknown.join(" ")} (use "check" or "fragment")`);
      blocks.push(block);
    }
    i = end;
  }
  return blocks;
}

/** The module specifiers a block imports (static imports, re-exports and dynamic imports). */
export function importsOf(code: string): string[] {
  // TypeScript's own pre-processor: comments and strings that merely mention a module do not count.
  return ts.preProcessFile(code, true, true).importedFiles.map((f) => f.fileName);
}

/** The pages whose blocks are checked: README.md and docs/*.md (docs/performance.md is generated and has none). */
export function docPages(root: string): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => join("docs", f));
  return ["README.md", ...docs];
}

export function allBlocks(root: string): DocBlock[] {
  return docPages(root).flatMap((page) => extractBlocks(readFileSync(join(root, page), "utf8"), page));
}

/**
 * The package's entry points from its `exports` (`loomwork/fs` -> `adapters/fs/index.ts`), as the
 * checkout's source files, relative to the checkout.
 */
export function entryPoints(root: string): Map<string, string> {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    name: string;
    exports: Record<string, string | { types?: string }>;
  };
  const map = new Map<string, string>();
  for (const [key, target] of Object.entries(manifest.exports)) {
    const types = typeof target === "string" ? target : target.types;
    if (!types || !types.endsWith(".d.ts")) continue;
    const specifier = key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`;
    map.set(specifier, types.replace(/^\.\/dist\//, "").replace(/\.d\.ts$/, ".ts"));
  }
  return map;
}

/**
 * The block's code with the package's specifiers pointing at the checkout's sources, from `fromDir`
 * (the directory the block's file is written to). Lines are neither added nor removed; a block that
 * neither imports nor exports gets an `export {}` line appended after its last one, so it is a module (top-level
 * await, no global names shared between blocks).
 */
export function mapSpecifiers(code: string, entries: Map<string, string>, root: string, fromDir: string): string {
  const mapped = code.replace(
    /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(["'])([^"']+)\2/g,
    (whole, lead: string, quote: string, spec: string) => {
      const alias = INSTALLED_AS[spec];
      if (alias) return `${lead}${quote}${alias}${quote}`;
      const source = entries.get(spec);
      if (!source) return whole;
      let rel = relative(fromDir, join(root, source)).replace(/\\/g, "/").replace(/\.ts$/, ".js");
      if (!rel.startsWith(".")) rel = `./${rel}`;
      return `${lead}${quote}${rel}${quote}`;
    },
  );
  return /^\s*(import|export)\b/m.test(mapped) ? mapped : `${mapped}\nexport {};\n`;
}

/** The name of the file written for a block: `docs-agents.md-L8.ts`. */
export function blockFileName(block: DocBlock): string {
  return `${block.doc.replace(/[/\\]/g, "-")}-L${block.line}.${block.lang}`;
}
