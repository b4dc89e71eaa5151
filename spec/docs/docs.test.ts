// The docs run: every TypeScript block of README.md and docs/*.md type-checks against the checkout (one
// program for all of them), and every block that can run offline runs, each in an empty temporary
// directory. A failure names the page and line: `docs/agents.md:12:5 TS2304: Cannot find name 'stores'.`
// The markers (```ts check, ```ts fragment) are described in spec/docs/extract.ts.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import {
  describeRun,
  formatProblem,
  OUT_DIR,
  ROOT,
  runBlock,
  typeCheck,
  writeBlocks,
  type DocProblem,
} from "./check.js";
import { allBlocks, entryPoints, extractBlocks, importsOf, mapSpecifiers, type DocBlock } from "./extract.js";

const SELF_TEST_DIR = join(OUT_DIR, "..", "docs-blocks-self-test");

describe("the extractor", () => {
  const page = [
    "# A page", //                         1
    "", //                                 2
    "```ts", //                            3
    'import { createApp } from "loomwork"; // or from "loomwork/postgres"',
    "```", //                              5
    "```sh", //                            6
    "npm test", //                         7
    "```", //                              8
    "```ts check", //                      9
    'import { fsStores } from "loomwork/fs";',
    "```",
    "```ts fragment",
    "effects: { a },",
    "```",
    "```tsx",
    "const x = <p />;",
    "```",
    "```ts",
    'import { postgresStores } from "loomwork/postgres";',
    "```",
  ].join("\n");

  it("finds the TypeScript blocks with the page line of their first line of code, and their markers", () => {
    const blocks = extractBlocks(page, "docs/x.md");
    expect(blocks.map((b) => [b.line, b.mode, b.reason])).toEqual([
      [4, "run", undefined], // a module named in a comment does not make it check-only
      [10, "check", "marked check"],
      [13, "fragment", "marked fragment"],
      [16, "check", "JSX (renders in a DOM)"],
      [19, "check", "imports loomwork/postgres"],
    ]);
  });

  it("refuses a marker it does not know, naming the page and line", () => {
    expect(() => extractBlocks("text\n```ts runnable\nconst a = 1;\n```\n", "docs/y.md")).toThrow(
      /docs\/y\.md:2: unknown block marker runnable/,
    );
  });

  it("maps the package's specifiers to the checkout's sources on the same line, and makes a block a module", () => {
    const entries = entryPoints(ROOT);
    expect(entries.get("loomwork")).toBe("index.ts");
    expect(entries.get("loomwork/fs")).toBe("adapters/fs/index.ts");
    const code = 'import { a } from "loomwork";\nimport { b } from "loomwork/fs";\nconst c = await import("xstate");';
    const mapped = mapSpecifiers(code, entries, ROOT, `${ROOT}/.tmp/docs-blocks`);
    expect(mapped.split("\n").slice(0, 3)).toEqual([
      'import { a } from "../../index.js";',
      'import { b } from "../../adapters/fs/index.js";',
      'const c = await import("xstate");',
    ]);
    expect(mapSpecifiers("console.log(1);", entries, ROOT, ROOT)).toBe("console.log(1);\nexport {};\n");
    expect(
      importsOf('import type { A } from "loomwork";\n// import { B } from "nowhere";\nexport * from "loomwork/fs";'),
    ).toEqual(["loomwork", "loomwork/fs"]);
  });

  it("reports a type error in a block at its page's line and column", () => {
    expect(
      problems()
        .filter((p) => p.doc === BROKEN.doc)
        .map(formatProblem),
    ).toEqual(["docs/broken.md:42:23 TS2304: Cannot find name 'stores'."]);
  }, 180_000);

  it("reports a block that throws at its page's line", async () => {
    const [block] = writeBlocks(
      [{ doc: "docs/throws.md", line: 7, lang: "ts", mode: "run", code: 'throw new Error("the doc is wrong");' }],
      SELF_TEST_DIR,
    );
    const result = await runBlock(block!);
    expect(result.code).not.toBe(0);
    expect(describeRun(block!, result)).toMatch(/^docs\/throws\.md:7 the block exited with 1;[\s\S]*the doc is wrong/);
  });
});

// The real pages, and a broken block of a page that does not exist, in one program: written once, checked once.
const BROKEN: DocBlock = {
  doc: "docs/broken.md",
  line: 40,
  lang: "ts",
  mode: "check",
  code: 'import { createApp } from "loomwork";\n\nconst app = createApp(stores);',
};
const written = writeBlocks([...allBlocks(ROOT), BROKEN]);
const blocks = written.filter((b) => b.doc !== BROKEN.doc);
let checked: DocProblem[] | undefined;
function problems(): DocProblem[] {
  checked ??= typeCheck(written);
  return checked;
}

describe("README.md and docs/*.md", () => {
  it("have TypeScript blocks, few of them fragments", () => {
    expect(blocks.length).toBeGreaterThan(30);
    const fragments = allBlocks(ROOT).filter((b) => b.mode === "fragment");
    expect(fragments.map((b) => `${b.doc}:${b.line}`).length).toBeLessThanOrEqual(5);
  });

  it("type-check, every block", () => {
    const found = problems()
      .filter((p) => p.doc !== BROKEN.doc)
      .map(formatProblem);
    expect(found, `\n${found.join("\n")}\n`).toEqual([]);
  }, 180_000);

  for (const block of blocks.filter((b) => b.mode === "run")) {
    it(`${block.doc}:${block.line} runs, offline, in an empty directory`, async () => {
      const result = await runBlock(block);
      expect(result.code, describeRun(block, result)).toBe(0);
    }, 90_000);
  }
});
