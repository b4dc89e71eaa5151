// `--help` for every command, and `loomwork run <story>` journaling into --dir for `ls` to show.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listStories, helpCommands } from "../../cli/commands/run.js";
import { cli } from "./support.js";

const COMMANDS = [
  "run",
  "ls",
  "log",
  "follow",
  "stats",
  "approvals",
  "inspect",
  "send",
  "approve",
  "deny",
  "stop",
  "resume",
  "sweep",
  "erase",
  "export",
];
const EXIT_CODES =
  "Exit codes: 0 ok, 1 runtime failure, 2 usage error, 3 not found, 4 corrupt journal, 5 journal locked.";

describe("loomwork --help", () => {
  it("lists every command with its summary", async () => {
    const { code, stdout } = await cli(["--help"]);
    expect(code).toBe(0);
    for (const name of COMMANDS) expect(stdout).toMatch(new RegExp(`^  ${name} +\\S`, "m"));
    expect(stdout).toContain(EXIT_CODES);
  });

  it("heads the list with run only where stories are present (a checkout; the package ships none)", () => {
    const commands = COMMANDS.map((name) => ({ spec: { name } }));
    expect(listStories().length).toBeGreaterThan(0);
    expect(helpCommands(commands).map((c) => c.spec.name)).toEqual(COMMANDS);
    expect(helpCommands(commands, []).map((c) => c.spec.name)).toEqual(COMMANDS.filter((n) => n !== "run"));
  });

  it("prints the package's version with --version (and -v)", async () => {
    const { version } = JSON.parse(await readFile("package.json", "utf8"));
    for (const flag of ["--version", "-v"]) {
      const { code, stdout } = await cli([flag]);
      expect(code, flag).toBe(0);
      expect(stdout, flag).toBe(`${version}\n`);
    }
  });

  it("documents every command: usage, arguments, options, examples, exit codes", async () => {
    const results = await Promise.all(COMMANDS.map((name) => cli([name, "--help"])));
    results.forEach(({ code, stdout }, i) => {
      const name = COMMANDS[i]!;
      expect(code, name).toBe(0);
      expect(stdout, name).toMatch(new RegExp(`^Usage: loomwork ${name}( [<\\[][^\\n]*)? \\[options\\]$`, "m"));
      expect(stdout, name).toContain("--dir <dir>");
      expect(stdout, name).toContain("--json");
      expect(stdout, name).toMatch(new RegExp(`^Examples:\\n  loomwork ${name}`, "m"));
      expect(stdout, name).toContain(EXIT_CODES);
    });
    expect((await cli(["help", "log"])).stdout).toBe(results[COMMANDS.indexOf("log")]!.stdout);
  });
});

describe("loomwork run", () => {
  let dir: string | undefined;
  afterAll(() => dir && rm(dir, { recursive: true, force: true }));

  it("lists the stories", async () => {
    const { code, stdout } = await cli(["run", "--json"]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).stories).toEqual(
      expect.arrayContaining(["desktop-embed", "research-agent", "resume-demo"]),
    );
  });

  it("runs a story as its own process, its output and exit code passed through", async () => {
    dir = await mkdtemp(join(tmpdir(), "loomwork-run-"));
    const { code, stdout } = await cli(["run", "resume-demo", "--dir", dir]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/fresh app: replayed \d+ records, served 2 steps from the log/);
  });
});
