// README's checkable claims, read from README.md and compared with what they describe: the CLI's command
// list with the commands the CLI registers (its `--help`), the story table with the stories
// `npm run story` knows, the comparison table's yes/no cells with the features the docs document, and the
// figures of "Measured" with docs/performance.md. Each fails, naming the difference, when README drifts.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "./check.js";

const execFileP = promisify(execFile);
const TSX = join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

function read(path: string): string {
  return readFileSync(join(ROOT, path), "utf8");
}

/** The text of README's `## <title>` section, up to the next `## ` heading. */
function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md has no "## ${title}" section`);
  const end = README.indexOf("\n## ", start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The body rows of the first Markdown table in `text`, as cells (header and separator left out). */
function tableRows(text: string): string[][] {
  const lines = text.split("\n");
  const first = lines.findIndex((l) => l.startsWith("|"));
  if (first < 0) return [];
  const rows: string[][] = [];
  for (let i = first + 2; i < lines.length && lines[i]!.startsWith("|"); i++) {
    rows.push(
      lines[i]!.slice(1, -1)
        .split("|")
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** The first word inside the first backticks of a cell: `` `log <id>` `` -> `log`. */
function firstCodeWord(cell: string): string | undefined {
  return /`([^`\s]+)/.exec(cell)?.[1];
}

/** What a README list misses and what it names that is not there (and names twice): both empty when it agrees. */
function difference(
  listed: (string | undefined)[],
  actual: string[],
): { missing: string[]; unknown: (string | undefined)[]; twice: (string | undefined)[] } {
  return {
    missing: actual.filter((name) => !listed.includes(name)),
    unknown: listed.filter((name) => name === undefined || !actual.includes(name)),
    twice: listed.filter((name, i) => listed.indexOf(name) !== i),
  };
}

async function tsx(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return execFileP(process.execPath, [TSX, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1" },
    timeout: 60_000,
  });
}

describe("README.md", () => {
  it("lists every command the CLI registers, and no other", async () => {
    const { stdout } = await tsx(["cli/main.ts", "--help"]);
    const help = stdout.split("\n");
    const from = help.indexOf("Commands:");
    const registered: string[] = [];
    for (const line of help.slice(from + 1)) {
      const m = /^ {2}(\S+) {2,}/.exec(line);
      if (!m) break;
      registered.push(m[1]!);
    }
    expect(registered.length).toBeGreaterThan(10);
    const listed = tableRows(section("The CLI")).map(([cell]) => firstCodeWord(cell!));
    expect(
      difference(listed, registered),
      "README.md, The CLI: the table's commands against `loomwork --help`",
    ).toEqual({ missing: [], unknown: [], twice: [] });
  });

  it("has a row in the story table for every story `npm run story` knows, and no other", async () => {
    // Without a name, stories/run.ts prints its usage and the stories it knows, and exits 0.
    const { stderr } = await tsx(["stories/run.ts"]);
    const known = /^stories: (.*)$/m.exec(stderr)?.[1]?.split(", ");
    expect(known, stderr).toBeDefined();
    const listed = tableRows(section("Stories")).map(([cell]) => firstCodeWord(cell!));
    expect(difference(listed, known!), "README.md, Stories: the table's stories against `npm run story`").toEqual({
      missing: [],
      unknown: [],
      twice: [],
    });
  });

  // A comparison row whose loomwork cell names a documented feature: "yes" exactly when every piece of
  // evidence holds (the docs document the feature; the entry point or export it needs exists).
  const exportsOf = Object.keys((JSON.parse(read("package.json")) as { exports: Record<string, unknown> }).exports);
  const features: { row: string; evidence: Record<string, () => boolean> }[] = [
    {
      row: "Multi-host scale-out, task queues, worker fleets",
      evidence: {
        "docs/scaling.md documents a fleet of workers on PostgreSQL": () =>
          /^# Scaling out: a fleet of workers on PostgreSQL/m.test(read("docs/scaling.md")) &&
          read("docs/scaling.md").includes("createWorker("),
        "package.json exports loomwork/postgres": () => exportsOf.includes("./postgres"),
        "README.md has its fleet section": () => /^## A fleet on your own PostgreSQL$/m.test(README),
      },
    },
    {
      row: "Runs in a browser tab, offline",
      evidence: {
        "docs/storage.md documents indexedDbStores": () => read("docs/storage.md").includes("indexedDbStores"),
        "package.json exports loomwork/indexeddb": () => exportsOf.includes("./indexeddb"),
      },
    },
    {
      row: "Determinism checked on replay",
      evidence: {
        "docs/upgrades.md documents NonDeterminismError": () =>
          read("docs/upgrades.md").includes("NonDeterminismError"),
        "index.ts exports NonDeterminismError": () => /\bNonDeterminismError\b/.test(read("index.ts")),
      },
    },
    {
      row: "Agent loop, compaction, taint fencing built in",
      evidence: {
        "docs/agents.md documents agentLoop$, compaction and taint": () =>
          ["agentLoop$", "compaction", "taint"].every((w) => read("docs/agents.md").includes(w)),
      },
    },
    {
      row: "Per-subject encryption and erasure (GDPR)",
      evidence: {
        "docs/security.md documents eraseSubject and exportSubject": () =>
          ["eraseSubject", "exportSubject"].every((w) => read("docs/security.md").includes(w)),
      },
    },
  ];
  const comparison = tableRows(section("How it compares"));

  for (const { row, evidence } of features) {
    it(`says yes or no in the comparison's "${row}" row as the docs have it`, () => {
      const cells = comparison.find(([label]) => label === row);
      expect(cells, `README.md, How it compares: no row "${row}"`).toBeDefined();
      const facts = Object.entries(evidence).map(([what, holds]) => `${what}: ${holds() ? "yes" : "no"}`);
      const expected = Object.values(evidence).every((holds) => holds()) ? "yes" : "no";
      const said = /^(yes|no)\b/i.exec(cells![1]!)?.[1]?.toLowerCase();
      expect(
        said,
        `README.md, How it compares, "${row}": the loomwork cell "${cells![1]}" should start with ${expected} (${facts.join("; ")})`,
      ).toBe(expected);
    });
  }

  it("quotes in Measured only figures docs/performance.md has", () => {
    const measured = section("Measured");
    const performance = read("docs/performance.md");
    const figures = [...measured.matchAll(/\b\d[\d,]*(?:\.\d+)?(?: ?(?:KB|B)\b|x\b)/g)].map((m) => m[0]);
    expect(figures.length).toBeGreaterThan(5);
    // A figure is found as docs/performance.md writes it (3,365 B, 606.6 KB, 116.9x), not as a part of a longer number.
    const has = (figure: string) =>
      new RegExp(`(?<![\\d.,])${figure.replace(/[.]/g, "\\.")}(?![\\w.])`).test(performance);
    const missing = figures.filter((f) => !has(f));
    expect(
      missing,
      "README.md, Measured: figures docs/performance.md does not have (rerun `npm run bench` or quote its figures)",
    ).toEqual([]);
    const date = /\b(20\d\d-\d\d-\d\d)\b/.exec(measured)?.[1];
    expect(date, "README.md, Measured: the date of the run it quotes").toBeDefined();
  });
});
