// Torn tails are truncated at open; a damaged middle frame is reported with its offset, never dropped.
import { cp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { scanFrames } from "../../adapters/fs/framing.js";
import { ExecutionPaths } from "../../adapters/fs/journalFiles.js";
import { JournalCorruptionError } from "../../stores/errors.js";
import { removeTempDirs, started, step, tempDir } from "./helpers.js";

afterAll(removeTempDirs);

// These tests are about parsing what is on disk, not durability: skip the fsyncs to keep them fast.
const fast = { fsOps: { fsync: async () => undefined, fsyncDir: async () => undefined } };

const logOf = (dir: string, executionId: string) => ExecutionPaths.of(dir, executionId).log;
const checkpointOf = (dir: string) => join(dir, "catalogue.ckpt");
const dirtyOf = (dir: string) => join(dir, "catalogue.dirty");

/** A directory whose execution "e" has records 1..3, each its own append; returns the log's frame offsets. */
async function journalWithThreeRecords(): Promise<{
  dir: string;
  frames: number[];
  size: number;
  checkpointBeforeLast: Buffer;
}> {
  const dir = await tempDir("torn");
  let stores = await fsStores({ dir });
  await stores.events.append("e", 0, [started(1)]);
  await stores.events.append("e", 1, [step(2)]);
  await stores.close();
  const checkpointBeforeLast = await readFile(checkpointOf(dir));
  stores = await fsStores({ dir });
  await stores.events.append("e", 2, [step(3, { last: "record" })]);
  await stores.close();
  const bytes = await readFile(logOf(dir, "e"));
  return { dir, frames: scanFrames(bytes).frames.map((f) => f.offset), size: bytes.length, checkpointBeforeLast };
}

describe("fs journal recovery", () => {
  it.each([
    ["without a checkpoint (whole log scanned)", "none"],
    ["with a checkpoint older than the last record (tail scanned)", "older"],
  ] as const)("truncates a torn last record at every byte offset, %s", async (_, checkpoint) => {
    const original = await journalWithThreeRecords();
    const lastOffset = original.frames.at(-1)!;
    for (let cut = lastOffset + 1; cut < original.size; cut++) {
      const dir = await tempDir("cut");
      await cp(original.dir, dir, { recursive: true });
      const log = logOf(dir, "e");
      await writeFile(log, (await readFile(log)).subarray(0, cut));
      if (checkpoint === "none") await rm(checkpointOf(dir));
      else {
        // The crash this simulates: the writer of seq 3 made catalogue.dirty durable before its append, and
        // died with the checkpoint of its open on disk (ADR 0008; a clean close would have removed the marker).
        await writeFile(checkpointOf(dir), original.checkpointBeforeLast);
        await writeFile(dirtyOf(dir), "");
      }
      const stores = await fsStores({ dir, ...fast });
      expect((await stat(log)).size).toBe(lastOffset);
      expect(await stores.events.read("e")).toEqual([started(1), step(2)]);
      expect(await stores.events.getExecution("e")).toMatchObject({ head: 2, status: "running" });
      await stores.events.append("e", 2, [step(3, "again")]);
      expect(await stores.events.read("e", 3)).toEqual([step(3, "again")]);
      await stores.close();
      const reopened = await fsStores({ dir, ...fast });
      expect((await reopened.events.read("e")).map((r) => r.seq)).toEqual([1, 2, 3]);
      await reopened.close();
      await rm(dir, { recursive: true });
    }
  });

  it("forgets an execution whose first write was torn, and lets it start again", async () => {
    const original = await journalWithThreeRecords();
    for (let cut = 1; cut < original.frames[2]!; cut += 7) {
      const dir = await tempDir("first");
      await cp(original.dir, dir, { recursive: true });
      const log = logOf(dir, "e");
      await writeFile(log, (await readFile(log)).subarray(0, cut));
      await rm(checkpointOf(dir));
      const stores = await fsStores({ dir, ...fast });
      expect(await stores.events.head("e")).toBe(0);
      expect(await stores.events.listExecutions()).toEqual([]);
      await stores.events.append("e", 0, [started(1)]);
      expect(await stores.events.read("e")).toEqual([started(1)]);
      await stores.close();
      await rm(dir, { recursive: true });
    }
  });

  it("reports a flipped bit in a middle record with its file and offset, at open and at read", async () => {
    const dir = await tempDir("flip");
    const stores = await fsStores({ dir });
    await stores.events.append("e", 0, [started(1)]);
    for (let seq = 2; seq <= 5; seq++) await stores.events.append("e", seq - 1, [step(seq)]);
    await stores.close();
    const log = logOf(dir, "e");
    const bytes = await readFile(log);
    const victim = scanFrames(bytes).frames[3]!; // header, seq 1, seq 2, then seq 3
    const damaged = Buffer.from(bytes);
    damaged[victim.offset + 20]! ^= 0x04;
    await writeFile(log, damaged);

    // The checkpoint vouches for the file's length: open trusts it, the read finds the damage.
    const trusted = await fsStores({ dir });
    const atRead = await trusted.events.read("e").catch((error: unknown) => error);
    expect(atRead).toBeInstanceOf(JournalCorruptionError);
    expect(atRead).toMatchObject({ file: log, offset: victim.offset, code: "LOOM_JOURNAL_CORRUPT" });
    await expect(trusted.events.append("e", 5, [step(6)])).rejects.toBeInstanceOf(JournalCorruptionError);
    await trusted.close();

    // Without the checkpoint the open scan finds it: the file is kept whole, the execution refuses use.
    await rm(checkpointOf(dir));
    const scanned = await fsStores({ dir });
    expect((await stat(log)).size).toBe(bytes.length);
    await expect(scanned.events.read("e")).rejects.toMatchObject({ file: log, offset: victim.offset });
    await expect(scanned.events.append("e", 5, [step(6)])).rejects.toBeInstanceOf(JournalCorruptionError);
    expect(await scanned.events.getExecution("e")).toMatchObject({ head: 2 });
    await scanned.close();
  });

  it("reports a middle frame whose length bit flipped past the end of the file, instead of truncating", async () => {
    const dir = await tempDir("length");
    const stores = await fsStores({ dir });
    await stores.events.append("e", 0, [started(1)]);
    for (let seq = 2; seq <= 4; seq++) await stores.events.append("e", seq - 1, [step(seq)]);
    await stores.close();
    const log = logOf(dir, "e");
    const bytes = await readFile(log);
    const victim = scanFrames(bytes).frames[2]!;
    const damaged = Buffer.from(bytes);
    damaged[victim.offset + 2]! ^= 0x10; // the length grows by 1 MiB: it now runs past the end
    await writeFile(log, damaged);
    await rm(checkpointOf(dir));
    const reopened = await fsStores({ dir });
    await expect(reopened.events.read("e")).rejects.toMatchObject({ offset: victim.offset });
    expect((await stat(log)).size).toBe(bytes.length);
    await reopened.close();
  });

  it("rescans only what was appended since the checkpoint, and agrees with a full scan", async () => {
    const dir = await tempDir("ckpt");
    const stores = await fsStores({ dir, checkpointEvery: 3 });
    await stores.events.append("e", 0, [started(1, "s")]);
    for (let seq = 2; seq <= 10; seq++) await stores.events.append("e", seq - 1, [step(seq)]);
    await stores.events.append("e", 10, [{ seq: 11, at: 5, type: "loom.execution.ended", status: "done" }]);
    const expected = await stores.events.getExecution("e");
    await stores.close();
    const withCheckpoint = await fsStores({ dir });
    expect(await withCheckpoint.events.getExecution("e")).toEqual(expected);
    await withCheckpoint.close();
    await rm(checkpointOf(dir));
    const fullScan = await fsStores({ dir });
    expect(await fullScan.events.getExecution("e")).toEqual(expected);
    await fullScan.close();
  });
});
