// The erase-and-export story as a user runs it: a real process on a real journal directory.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = mkdtempSync(join(tmpdir(), "loomwork-erase-story-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("story: erase-and-export", () => {
  it("exports one subject to a file, erases it so no byte of it is readable on disk, and leaves the other intact", () => {
    const dir = join(root, "journal");
    const out = execFileSync(process.execPath, ["--import", "tsx", "stories/erase-and-export.ts"], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1", LOOMWORK_DIR: dir },
    });
    expect(out).toContain("contains her data: yes");
    expect(out).toMatch(/erase user-alice: key shredded yes; blobs deleted 1, retained 0/);
    expect(out).toContain("her records: unreadable (crypto-shredded)");
    expect(out).toContain("her canary on disk: found in no file of the journal");
    expect(out).toContain("a second erase: a no-op");
    expect(out).toContain("user-bob intact: yes");
    const exported = JSON.parse(readFileSync(join(dir, "export", "export-user-alice.json"), "utf8")) as {
      subject: string;
      claimChecked: { value?: unknown }[];
    };
    expect(exported.subject).toBe("user-alice");
    expect(JSON.stringify(exported.claimChecked[0]!.value)).toContain("CANARY-alice-7f3a91");
  });
});
