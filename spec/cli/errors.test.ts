// Bad input, as a user meets it: each a clear message on stderr and the documented exit code
// (2 usage, 3 not found, 4 corrupt journal, 5 locked), and the same facts as JSON with --json.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { cli, corruptCopy, executionFolder, makeJournal, type Journal } from "./support.js";

let journal: Journal;
const scratch: string[] = [];
beforeAll(async () => void (journal = await makeJournal()));
afterAll(() => Promise.all([journal.dir, ...scratch].map((d) => rm(d, { recursive: true, force: true }))));

describe("usage errors exit 2", () => {
  it.each([
    [[], /Usage: loomwork <command>/],
    [["lss"], /loomwork: unknown command "lss"\nDid you mean `loomwork ls`\?/],
    [["ls", "--colour"], /loomwork ls: unknown option '--colour'\nRun `loomwork ls --help` for its options\./],
    [["log"], /loomwork log: missing executionId\nUsage: loomwork log <executionId> \[options\]/],
    [["ls", "--status", "finished"], /--status must be one of running, done, error, stopped, damaged; got "finished"/],
  ])("loomwork %j", async (args, message) => {
    const { code, stdout, stderr } = await cli([...args, "--dir", journal.dir].slice(0, args.length ? undefined : 0));
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(message);
  });
});

describe("not found exits 3", () => {
  it("names an unknown execution id and suggests the ids that look alike", async () => {
    const { code, stderr } = await cli(["log", "research-don", "--dir", journal.dir]);
    expect(code).toBe(3);
    expect(stderr).toContain(`loomwork log: no execution "research-don" in ${journal.dir}`);
    expect(stderr).toContain('Did you mean "research-done"?');
  });

  it("reports the error as JSON on stderr with --json", async () => {
    const { code, stdout, stderr } = await cli(["log", "nope", "--dir", journal.dir, "--json"]);
    expect(code).toBe(3);
    expect(stdout).toBe("");
    expect(JSON.parse(stderr)).toEqual({
      error: {
        exitCode: 3,
        code: "LOOM_CLI_NOT_FOUND",
        message: `no execution "nope" in ${journal.dir}`,
        hint: "Run `loomwork ls` to list the executions.",
      },
    });
  });

  it("refuses a directory that does not exist, or is not a journal, without creating anything", async () => {
    const missing = join(tmpdir(), `loomwork-missing-${process.pid}`);
    const absent = await cli(["ls", "--dir", missing]);
    expect(absent.code).toBe(3);
    expect(absent.stderr).toContain(`loomwork ls: no journal directory at ${missing}`);
    const plain = await mkdtemp(join(tmpdir(), "loomwork-plain-"));
    scratch.push(plain);
    const notJournal = await cli(["stats", "--dir", plain]);
    expect(notJournal.code).toBe(3);
    expect(notJournal.stderr).toContain(`${plain} is not a loomwork journal directory (it has no executions/ folder)`);
  });

  it("names the stories when asked to run one that does not exist", async () => {
    const { code, stderr } = await cli(["run", "reseach-agent"]);
    expect(code).toBe(3);
    expect(stderr).toMatch(/loomwork run: no story "reseach-agent"\nStories: .*research-agent/);
  });
});

describe("a corrupt journal exits 4", () => {
  it("names the file and the byte offset of a damaged middle frame, and changes nothing", async () => {
    const copy = await corruptCopy(journal.dir, await executionFolder(journal.dir, "research-done"));
    scratch.push(copy);
    const log = await cli(["log", "research-done", "--dir", copy]);
    expect(log.code).toBe(4);
    expect(log.stdout).toBe("");
    expect(log.stderr).toMatch(
      /^loomwork log: corrupt journal: .*executions\/x[0-9a-f]+\/log is damaged at byte offset \d+ \(checksum mismatch\)\n/,
    );
    expect(log.stderr).toContain("Nothing was changed: only bytes past the last durable size are ever cut.");
    // stats measures the other executions and reports the damaged one.
    const stats = await cli(["stats", "--dir", copy]);
    expect(stats.code).toBe(4);
    expect(stats.stdout).toMatch(/^research-done +corrupt /m);
    expect(stats.stdout).toMatch(/^bulk-export +done +11 /m);
    expect(stats.stdout).toMatch(/LOOM_JOURNAL_CORRUPT research-done: Journal .* is corrupt at byte offset \d+/);
  });
});

describe("a journal another process has open", () => {
  it("is read by ls, log and stats beside its writer, and a writing command exits 5 saying who holds it", async () => {
    const stores = await fsStores({ dir: journal.dir });
    try {
      const ls = await cli(["ls", "--dir", journal.dir, "--json"]);
      expect(ls.code, ls.stderr).toBe(0);
      expect(
        JSON.parse(ls.stdout)
          .map((e: { executionId: string }) => e.executionId)
          .sort(),
      ).toEqual(["bulk-export", "research-done", "research-unfinished"]);
      expect((await cli(["log", "research-done", "--dir", journal.dir])).code).toBe(0);
      expect((await cli(["stats", "--dir", journal.dir, "--json"])).code).toBe(0);
      const { code, stderr } = await cli(["sweep", "--dir", journal.dir]);
      expect(code).toBe(5);
      expect(stderr).toContain(
        `loomwork sweep: the journal ${journal.dir} is locked by another process (pid ${process.pid} on `,
      );
      expect(stderr).toContain("ls, log, stats, inspect, export and erase --dry-run work beside it");
      // export and erase --dry-run write nothing: they read beside the writer too.
      const exported = await cli(["export", "user-42", "--dir", journal.dir]);
      expect(exported.code, exported.stderr).toBe(0);
      expect(JSON.parse(exported.stdout)).toMatchObject({ subject: "user-42" });
      const dry = await cli(["erase", "user-42", "--dry-run", "--dir", journal.dir, "--json"]);
      expect(dry.code, dry.stderr).toBe(0);
      expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, subject: "user-42" });
      const json = await cli(["erase", "user-42", "--yes", "--dir", journal.dir, "--json"]);
      expect(json.code).toBe(5);
      expect(JSON.parse(json.stderr).error).toMatchObject({ exitCode: 5, code: "LOOM_WRITER_LOCKED" });
    } finally {
      await stores.close();
    }
    expect((await cli(["sweep", "--dir", journal.dir])).code).toBe(0);
  });
});
