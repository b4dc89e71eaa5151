// Journals, snapshots, segments, blobs, keys, the lock and the catalogue are the owner's alone from the
// moment they are created, whatever the process umask; a directory left looser by an older version or by
// hand is reported at open and tightened when this user owns it.
import { chown, chmod, lstat, mkdir, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import type { Warning } from "../../index.js";
import { removeTempDirs, started, step, tempDir } from "./helpers.js";

afterAll(removeTempDirs);

const umaskBefore = process.umask();
afterEach(() => void process.umask(umaskBefore));

/** Every entry under `root` (itself included) whose mode is not 0700 for a directory or 0600 for a file: path and octal mode. */
async function looser(root: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (path: string): Promise<void> => {
    const info = await lstat(path);
    const mode = info.mode & 0o777;
    if (mode !== (info.isDirectory() ? 0o700 : 0o600))
      found.push(`${path.slice(root.length) || "."} ${mode.toString(8)}`);
    if (info.isDirectory()) for (const name of await readdir(path)) await visit(join(path, name));
  };
  await visit(root);
  return found;
}

describe("fs stores create every file 0600 and every directory 0700", () => {
  it.each([
    ["0000", 0],
    ["0022", 0o022],
    ["0077", 0o077],
  ])(
    "with umask %s: log, snapshot, segment, blob, key, tombstone, lock, dirty marker, checkpoint",
    async (_label, umask) => {
      process.umask(umask);
      const dir = join(await tempDir(`modes-${umask.toString(8)}`), "nested", "journal");
      const stores = await fsStores({ dir });
      await stores.events.append("a", 0, [started(1, "subject-a"), step(2), step(3)]);
      await stores.events.putSnapshot("a", { seq: 3, at: 3, state: { a: 1 } });
      await stores.events.archive("a", 2);
      await stores.content.put(new TextEncoder().encode("a blob"));
      await stores.keys.getOrCreate("subject-a");
      await stores.keys.getOrCreate("subject-b");
      await stores.keys.destroy("subject-b");
      // While the writer is open: the lock file and catalogue.dirty are there.
      expect((await readdir(dir)).sort()).toEqual(expect.arrayContaining(["catalogue.dirty", "loomwork.lock"]));
      expect(await looser(dir)).toEqual([]);
      await stores.close();
      expect((await readdir(dir)).sort()).toContain("catalogue.ckpt");
      expect(await looser(dir)).toEqual([]);
      // The parents fsStores created for the directory are private too.
      expect((await stat(join(dir, ".."))).mode & 0o777).toBe(0o700);
    },
  );
});

describe("fs stores report a journal directory that others can read", () => {
  it("warns through onWarn and tightens it to 0700 when this user owns it", async () => {
    const dir = await tempDir("loose-own");
    await chmod(dir, 0o755);
    const warnings: Warning[] = [];
    const stores = await fsStores({ dir, onWarn: (warning) => warnings.push(warning) });
    await stores.close();
    expect(warnings).toEqual([
      { code: "LOOM_JOURNAL_PERMISSIONS", message: expect.stringContaining(`${dir} was mode 755`) },
    ]);
    expect(warnings[0]!.message).toContain("tightened to 700");
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it.runIf(process.getuid?.() === 0)("warns and leaves the mode alone when another user owns it", async () => {
    const dir = await tempDir("loose-other");
    await mkdir(join(dir, "journal"), { mode: 0o755 });
    await chmod(join(dir, "journal"), 0o755);
    await chown(join(dir, "journal"), 65534, 65534);
    const warnings: Warning[] = [];
    const stores = await fsStores({ dir: join(dir, "journal"), onWarn: (warning) => warnings.push(warning) });
    await stores.close();
    expect(warnings).toEqual([
      { code: "LOOM_JOURNAL_PERMISSIONS", message: expect.stringContaining("owned by uid 65534") },
    ]);
    expect((await stat(join(dir, "journal"))).mode & 0o777).toBe(0o755);
  });

  it("says nothing about a private directory", async () => {
    const dir = await tempDir("private");
    const warnings: Warning[] = [];
    const stores = await fsStores({ dir, onWarn: (warning) => warnings.push(warning) });
    await stores.close();
    expect(warnings).toEqual([]);
  });
});
