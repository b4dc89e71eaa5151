// One writer per directory: a second opener fails fast; a SIGKILLed holder's lock is taken over.
// (Pid reuse by an unrelated live process: spec/reliability/fsLockKeys.test.ts.)
import { spawnSync } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { isoTime } from "../../adapters/fs/lock.js";
import { WriterLockedError } from "../../stores/errors.js";
import { kill, removeTempDirs, spawnChild, started, step, tempDir, waitForOutput } from "./helpers.js";

afterAll(removeTempDirs);

describe("fs writer lock", () => {
  it("writes the time it was taken as toISOString does", () => {
    for (const ms of [
      0,
      1,
      999,
      86_399_999,
      951_782_400_000,
      Date.UTC(2026, 11, 2, 0, 38, 6, 7),
      253_402_300_799_999,
    ]) {
      expect(isoTime(new Date(ms))).toBe(new Date(ms).toISOString());
    }
  });

  it("refuses a second fsStores on the same directory in this process until the first closes", async () => {
    const dir = await tempDir("lock");
    const first = await fsStores({ dir });
    const refused = await fsStores({ dir }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(WriterLockedError);
    expect(refused).toMatchObject({ code: "LOOM_WRITER_LOCKED", resource: dir });
    await first.events.close();
    const second = await fsStores({ dir });
    await second.close();
  });

  it("fails a second process fast while the holder lives, and hands over after the holder is SIGKILLed", async () => {
    const dir = await tempDir("lock-proc");
    const holder = spawnChild("holder.ts", [dir, "25"]);
    try {
      await waitForOutput(holder, (out) => out.includes("ready\n"));

      const t0 = performance.now();
      await expect(fsStores({ dir })).rejects.toMatchObject({ code: "LOOM_WRITER_LOCKED", resource: dir });
      expect(performance.now() - t0).toBeLessThan(1_000);
      const other = JSON.parse(await waitForOutput(spawnChild("tryOpen.ts", [dir]), (out) => out.endsWith("\n")));
      expect(other).toMatchObject({ code: "LOOM_WRITER_LOCKED", resource: dir });
      expect(other.ms).toBeLessThan(1_000);
    } finally {
      await kill(holder);
    }
    const stores = await fsStores({ dir });
    expect((await stores.events.read("held")).map((r) => r.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    await stores.events.append("held", 25, [step(26)]);
    await stores.close();
  });

  it("takes over a lock left by a dead process or left unreadable", async () => {
    const dir = await tempDir("stale");
    const lockPath = join(dir, "loomwork.lock");
    /** Opens over the stale lock at `lockPath`; checks the lock is ours while open, works, and is gone after close. */
    const takeOver = async (stale: string) => {
      await writeFile(lockPath, stale);
      const stores = await fsStores({ dir });
      const held = JSON.parse(await readFile(lockPath, "utf8"));
      expect(held).toMatchObject({ pid: process.pid, hostname: hostname() });
      expect(held.token).toMatch(/^[0-9a-f]{24}$/);
      expect(stale).not.toContain(held.token);
      // The directory is writable and a second opener is refused: the takeover produced a real lock.
      const seq = await stores.events.head("t");
      await stores.events.append("t", seq, [seq === 0 ? started(1) : step(seq + 1)]);
      await expect(fsStores({ dir })).rejects.toBeInstanceOf(WriterLockedError);
      await stores.close();
      expect((await readdir(dir)).filter((name) => name.startsWith("loomwork.lock"))).toEqual([]);
    };
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    await takeOver(JSON.stringify({ pid: dead, hostname: hostname(), token: "t", acquiredAt: "" }));
    await takeOver("{ torn");
    // A lock with this process's pid but a token it never issued is from a previous incarnation (pid reuse).
    await takeOver(JSON.stringify({ pid: process.pid, hostname: hostname(), token: "old", acquiredAt: "" }));
    const stores = await fsStores({ dir });
    expect((await stores.events.read("t")).map((r) => r.seq)).toEqual([1, 2, 3]);
    await stores.close();
  });
});
