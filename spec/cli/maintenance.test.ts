// `loomwork export | erase | sweep` call the app's own entry points over the journal directory.
import { readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, makeJournal, type Journal } from "./support.js";

let journal: Journal;
beforeAll(async () => void (journal = await makeJournal()));
afterAll(() => rm(journal.dir, { recursive: true, force: true }));

describe("loomwork export, erase, sweep", () => {
  it("exports a subject's executions to a file", async () => {
    const file = join(journal.dir, "..", `export-${process.pid}.json`);
    try {
      const { code, stdout } = await cli(["export", "user-42", "-o", file, "--dir", journal.dir]);
      expect(code).toBe(0);
      expect(stdout).toMatch(/^exported subject user-42 to .* \(\d+ bytes\)$/m);
      const exported = JSON.parse(await readFile(file, "utf8"));
      expect(exported.subject).toBe("user-42");
      expect(exported.executions.map((e: { executionId: string }) => e.executionId)).toEqual(["research-done"]);
      expect(exported.executions[0].records).toHaveLength(29);
      // A subject's data, the owner's alone like the journal it came from.
      expect((await stat(file)).mode & 0o777).toBe(0o600);
    } finally {
      await rm(file, { force: true });
    }
  });

  it("refuses -o into a folder that does not exist before exporting (3), with the folder named", async () => {
    const missing = join(journal.dir, "..", `no-such-folder-${process.pid}`);
    const { code, stdout, stderr } = await cli([
      "export",
      "user-42",
      "-o",
      join(missing, "out.json"),
      "--dir",
      journal.dir,
    ]);
    expect(code).toBe(3);
    expect(stdout).toBe("");
    expect(stderr).toContain(`the folder ${missing} does not exist`);
    expect(stderr).not.toContain("ENOENT");
  });

  it("refuses a subject with nothing to erase or export (3)", async () => {
    for (const command of ["erase", "export"]) {
      const { code, stderr } = await cli([command, "user-7", "--dir", journal.dir]);
      expect(code, command).toBe(3);
      expect(stderr).toContain(`loomwork ${command}: no execution holds data of subject "user-7"`);
    }
  });

  it("sweeps, then erases a subject", async () => {
    expect((await cli(["sweep", "--ttl-ms", "soon", "--dir", journal.dir])).code).toBe(2);
    const swept = await cli(["sweep", "--dir", journal.dir, "--json"]);
    expect(swept.code).toBe(0);
    expect(JSON.parse(swept.stdout)).toMatchObject({ sweepId: expect.stringMatching(/^loom\.sweep:/) });
    // Irreversible: off a terminal it needs --yes, and --dry-run changes nothing.
    const unconfirmed = await cli(["erase", "user-42", "--dir", journal.dir]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('erase cannot be undone: pass --yes to erase subject "user-42"');
    const dry = await cli(["erase", "user-42", "--dry-run", "--json", "--dir", journal.dir]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      dryRun: true,
      subject: "user-42",
      executions: [{ executionId: "research-done", status: "done", records: 29 }],
      key: "none",
    });
    expect(JSON.parse((await cli(["ls", "--subject", "user-42", "--json", "--dir", journal.dir])).stdout)).toHaveLength(
      1,
    );
    const erased = await cli(["erase", "user-42", "--yes", "--dir", journal.dir]);
    expect(erased.code).toBe(0);
    expect(erased.stdout).toMatch(/^erased subject user-42 \(loom\.erase:user-42:\d+\): 1 executions, key destroyed;/m);
    expect((await cli(["ls", "--subject", "user-42", "--json", "--dir", journal.dir])).stdout.trim()).toBe("[]");
  });
});
