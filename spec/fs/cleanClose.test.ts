// ADR 0008: a clean close writes a clean checkpoint; the next open trusts it and recovers each log at its
// first use. A crash (catalogue.dirty left, or a dead writer's lock) or `verifyAtOpen` recovers every log
// at open, as before. A log that disagrees with the trusted checkpoint fails safe at its first use.
import { spawnSync } from "node:child_process";
import { cp, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { encodeJsonFrame, scanFrames } from "../../adapters/fs/framing.js";
import { ExecutionPaths } from "../../adapters/fs/journalFiles.js";
import { JournalCorruptionError } from "../../stores/errors.js";
import { kill, removeTempDirs, spawnChild, started, step, tempDir, waitForOutput } from "./helpers.js";

afterAll(removeTempDirs);

const logOf = (dir: string, executionId: string) => ExecutionPaths.of(dir, executionId).log;
const checkpointOf = (dir: string) => join(dir, "catalogue.ckpt");
const dirtyOf = (dir: string) => join(dir, "catalogue.dirty");
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );
const ended = (seq: number) => ({ seq, at: 9, type: "loom.execution.ended", status: "done" });

/** The checkpoint file's payload as any reader sees it (one frame). */
async function checkpointValue(
  dir: string,
): Promise<{ clean?: unknown; entries: [string, { fileId: string; size: number; archivedThrough?: number }][] }> {
  const frame = scanFrames(await readFile(checkpointOf(dir))).frames[0]!;
  return frame.value as never;
}

/** Executions "a" (5 records, ended) and "b" (3 records, running), each record its own append; closed cleanly. */
async function cleanDirectory(): Promise<string> {
  const dir = await tempDir("clean");
  const stores = await fsStores({ dir });
  await stores.events.append("a", 0, [started(1, "sa")]);
  for (let seq = 2; seq <= 4; seq++) await stores.events.append("a", seq - 1, [step(seq)]);
  await stores.events.append("a", 4, [ended(5)]);
  await stores.events.append("b", 0, [started(1, "sb")]);
  for (let seq = 2; seq <= 3; seq++) await stores.events.append("b", seq - 1, [step(seq)]);
  expect(await exists(dirtyOf(dir))).toBe(true);
  await stores.close();
  return dir;
}

describe("fs open after a clean close (ADR 0008)", () => {
  it("writes a clean checkpoint with each log's exact size and removes catalogue.dirty; an open that writes nothing writes nothing", async () => {
    const dir = await cleanDirectory();
    expect(await exists(dirtyOf(dir))).toBe(false);
    const value = await checkpointValue(dir);
    expect(value.clean).toEqual({ executions: 2 });
    const entries = new Map(value.entries);
    for (const id of ["a", "b"]) {
      const name = ExecutionPaths.of(dir, id).name;
      expect(entries.get(name)).toMatchObject({ size: (await stat(logOf(dir, id))).size });
      expect(entries.get(name)?.archivedThrough).toBeUndefined(); // nothing archived: 0
    }
    // The clean mark's key names no execution folder (x<hex> or h<hex>): a reader that ignores it never recovers it.
    expect([...entries.keys()].filter((k) => !/^[xh][0-9a-f]*$/.test(k))).toEqual(["~clean"]);
    const before = await readFile(checkpointOf(dir));
    const { mtimeMs } = await stat(checkpointOf(dir));
    const stores = await fsStores({ dir });
    expect((await stores.events.listExecutions()).map((e) => [e.executionId, e.head, e.status])).toEqual([
      ["a", 5, "done"],
      ["b", 3, "running"],
    ]);
    expect(await stores.events.read("a", 4)).toEqual([step(4), ended(5)]);
    await stores.close();
    expect(await readFile(checkpointOf(dir))).toEqual(before);
    expect((await stat(checkpointOf(dir))).mtimeMs).toBe(mtimeMs);
    expect(await exists(dirtyOf(dir))).toBe(false);
  });

  it("trusts a clean checkpoint without reading the logs: a log replaced while closed is listed as checkpointed, then refused at its first read, and listed damaged from then on", async () => {
    const dir = await cleanDirectory();
    const log = logOf(dir, "b");
    const bytes = await readFile(log);
    const garbage = Buffer.alloc(bytes.length, 0x5a);
    await writeFile(log, garbage);
    const stores = await fsStores({ dir });
    // The open did not look at the log: the catalogue is the checkpoint's.
    const listed = await stores.events.getExecution("b");
    expect(listed).toMatchObject({ executionId: "b", status: "running", head: 3, subject: "sb" });
    expect(listed?.damaged).toBeUndefined();
    const error = await stores.events.read("b").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalCorruptionError);
    expect(error).toMatchObject({ file: log, offset: 0, code: "LOOM_JOURNAL_CORRUPT" });
    expect((await stores.events.getExecution("b"))?.damaged).toMatchObject({ file: log, offset: 0 });
    await expect(stores.events.append("b", 3, [step(4)])).rejects.toBeInstanceOf(JournalCorruptionError);
    // The other execution is untouched by it.
    expect((await stores.events.read("a")).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    await stores.close();
    // The damage is kept: the next (trusted) open reports it from the open on; the file was never rewritten.
    expect(await readFile(log)).toEqual(garbage);
    const reopened = await fsStores({ dir });
    expect((await reopened.events.getExecution("b"))?.damaged).toMatchObject({ file: log });
    await expect(reopened.events.read("b")).rejects.toBeInstanceOf(JournalCorruptionError);
    await reopened.close();
  });

  it("fails safe at first use on a log cut shorter than the clean checkpoint says (kind cut): read, append and snapshot refused, nothing truncated", async () => {
    const dir = await cleanDirectory();
    const log = logOf(dir, "a");
    const frames = scanFrames(await readFile(log)).frames;
    const cutAt = frames.at(-2)!.offset + 3;
    await truncate(log, cutAt);
    const stores = await fsStores({ dir });
    expect(await stores.events.head("a")).toBe(5);
    const error = await stores.events.read("a", 5).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalCorruptionError);
    expect(error).toMatchObject({ kind: "cut", file: log });
    await expect(stores.events.append("a", 5, [step(6)])).rejects.toMatchObject({ kind: "cut" });
    await expect(stores.events.putSnapshot("a", { seq: 5, at: 1, state: {} })).rejects.toMatchObject({ kind: "cut" });
    expect((await stores.events.getExecution("a"))?.damaged).toMatchObject({ kind: "cut" });
    await stores.close();
    expect((await stat(log)).size).toBe(cutAt);
  });

  it("fails safe at first use on a flipped byte in the last frame: the read fails with its offset (the CRC), the file is not cut", async () => {
    const dir = await cleanDirectory();
    const log = logOf(dir, "a");
    const bytes = await readFile(log);
    const last = scanFrames(bytes).frames.at(-1)!;
    const damaged = Buffer.from(bytes);
    damaged[last.offset + 12]! ^= 0x01;
    await writeFile(log, damaged);
    const stores = await fsStores({ dir });
    await expect(stores.events.read("a")).rejects.toMatchObject({ kind: "frame", file: log, offset: last.offset });
    await stores.close();
    expect(await readFile(log)).toEqual(damaged);
    // Restoring the bytes makes it whole again at the next open that recovers it.
    await writeFile(log, bytes);
    await rm(checkpointOf(dir));
    const restored = await fsStores({ dir });
    expect((await restored.events.read("a")).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    await restored.close();
  });

  it("recovers every log at open with verifyAtOpen, read-only or not: the damage is listed before any use", async () => {
    const dir = await cleanDirectory();
    await truncate(logOf(dir, "b"), 10);
    for (const readOnly of [true, false]) {
      const stores = await fsStores({ dir, verifyAtOpen: true, readOnly });
      const listed = await stores.events.listExecutions();
      expect(listed.find((e) => e.executionId === "b")?.damaged).toMatchObject({ file: logOf(dir, "b") });
      expect(listed.find((e) => e.executionId === "a")?.damaged).toBeUndefined();
      await stores.close();
    }
  });

  it("does not trust the clean checkpoint when catalogue.dirty is there (a writer died after its first write) or a dead writer's lock is taken over", async () => {
    for (const leftover of ["dirty marker", "stale lock"] as const) {
      const dir = await cleanDirectory();
      await truncate(logOf(dir, "b"), 10);
      if (leftover === "dirty marker") await writeFile(dirtyOf(dir), "");
      else {
        const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
        await writeFile(
          join(dir, "loomwork.lock"),
          JSON.stringify({ pid: dead, hostname: hostname(), token: "t", acquiredAt: "" }),
        );
      }
      const stores = await fsStores({ dir });
      expect((await stores.events.getExecution("b"))?.damaged, leftover).toMatchObject({ file: logOf(dir, "b") });
      await stores.close();
    }
    // Read-only beside a writer's lock: the logs are recovered as they are, not the checkpoint trusted.
    const dir = await cleanDirectory();
    await truncate(logOf(dir, "b"), 10);
    const writer = await fsStores({ dir, verifyAtOpen: true });
    const reader = await fsStores({ dir, readOnly: true });
    expect((await reader.events.getExecution("b"))?.damaged).toMatchObject({ file: logOf(dir, "b") });
    await reader.close();
    await writer.close();
  });

  it("after a SIGKILL of a writer that continued a cleanly closed directory, the open recovers every log (catalogue.dirty), every ack kept", async () => {
    const dir = await tempDir("killed");
    const first = await fsStores({ dir });
    await first.events.append("e", 0, [started(1)]);
    await first.events.append("e", 1, [step(2, { n: 2 })]);
    await first.close();
    const child = spawnChild("continuer.ts", [dir]);
    let stdout: string;
    try {
      stdout = await waitForOutput(child, (out) => out.split("\n").filter((l) => l.startsWith("ack ")).length >= 60);
    } finally {
      await kill(child);
    }
    const acked = Math.max(
      ...stdout
        .split("\n")
        .filter((l) => l.startsWith("ack "))
        .map((l) => Number(l.split(" ")[2])),
    );
    // The clean checkpoint of the first close is still on disk (no checkpoint in 60 appends), and says head 2.
    expect((await checkpointValue(dir)).clean).toEqual({ executions: 1 });
    // The dead writer's lock would refuse the trust too; removed here (as its error message tells an operator
    // to when no process uses the directory), the marker alone must.
    await rm(join(dir, "loomwork.lock"));
    const stores = await fsStores({ dir });
    const head = await stores.events.head("e");
    expect(head).toBeGreaterThanOrEqual(acked);
    expect(await exists(dirtyOf(dir))).toBe(true);
    expect((await stores.events.getExecution("e"))?.damaged).toBeUndefined();
    expect(await stores.events.read("e")).toEqual([
      started(1),
      ...Array.from({ length: head - 1 }, (_, i) => step(i + 2, { n: i + 2 })),
    ]);
    await stores.close();
    expect(await exists(dirtyOf(dir))).toBe(false);
  });

  it("still lists executions/ at a trusted open: a folder copied in while closed is listed, a folder gone is reported missing at open", async () => {
    const dir = await cleanDirectory();
    const other = await tempDir("other");
    const source = await fsStores({ dir: other });
    await source.events.append("c", 0, [started(1, "sc")]);
    await source.close();
    await cp(ExecutionPaths.of(other, "c").dir, ExecutionPaths.of(dir, "c").dir, { recursive: true });
    await rm(ExecutionPaths.of(dir, "b").dir, { recursive: true });
    const stores = await fsStores({ dir });
    const listed = await stores.events.listExecutions();
    expect(listed.map((e) => [e.executionId, e.head, e.damaged?.kind])).toEqual([
      ["a", 5, undefined],
      ["b", 3, "missing"],
      ["c", 1, undefined],
    ]);
    expect(await stores.events.read("c")).toEqual([started(1, "sc")]);
    await stores.close();
  });

  it("keeps catalogue.dirty when the writer failed (an fsync error): the close writes no clean checkpoint, the next open recovers every log", async () => {
    const dir = await cleanDirectory();
    let fsyncs = 0;
    const failing = async () => {
      if (++fsyncs > 4) throw Object.assign(new Error("EIO: injected by the test"), { code: "EIO" });
    };
    const stores = await fsStores({ dir, fsOps: { fsync: failing } });
    let acked = 3;
    for (let seq = 4; seq < 20; seq++) {
      const ok = await stores.events.append("b", seq - 1, [step(seq)]).then(
        () => true,
        () => false,
      );
      if (!ok) break;
      acked = seq;
    }
    expect(acked).toBeGreaterThan(3);
    expect(acked).toBeLessThan(19);
    await stores.close();
    expect(await exists(dirtyOf(dir))).toBe(true);
    const reopened = await fsStores({ dir });
    expect(await reopened.events.head("b")).toBeGreaterThanOrEqual(acked);
    expect((await reopened.events.read("b")).map((r) => r.seq)).toEqual(
      Array.from({ length: await reopened.events.head("b") }, (_, i) => i + 1),
    );
    await reopened.close();
  });

  it("opens a directory whose checkpoint has no clean mark (written before ADR 0008) with full recovery", async () => {
    const dir = await cleanDirectory();
    // The checkpoint as an older version wrote it: the same entries, no clean mark, no archivedThrough.
    const value = await checkpointValue(dir);
    const entries = value.entries
      .filter(([k]) => k !== "~clean")
      .map(([k, { archivedThrough: _, ...entry }]) => [k, entry]);
    await writeFile(checkpointOf(dir), encodeJsonFrame({ format: "loomwork-catalogue", version: 1, entries }));
    await truncate(logOf(dir, "b"), 10);
    const stores = await fsStores({ dir });
    expect((await stores.events.getExecution("b"))?.damaged).toMatchObject({ file: logOf(dir, "b") });
    expect((await stores.events.read("a")).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    await stores.close();
  });

  it("keeps the catalogue honest through archive, delete and a reopen: a trusted open lists what a full recovery lists", async () => {
    const dir = await cleanDirectory();
    const stores = await fsStores({ dir });
    await stores.events.archive("a", 3);
    await stores.events.deleteHistory("b");
    await stores.events.append("c", 0, [started(1, "sc")]);
    const expected = await stores.events.listExecutions();
    await stores.close();
    // The rewritten log's header says archived through 3: the clean checkpoint says it for the open that reads no header.
    expect(new Map((await checkpointValue(dir)).entries).get(ExecutionPaths.of(dir, "a").name)?.archivedThrough).toBe(
      3,
    );
    const trusted = await fsStores({ dir });
    expect(await trusted.events.listExecutions()).toEqual(expected);
    expect((await trusted.events.read("a")).map((r) => r.seq)).toEqual([4, 5]);
    await trusted.events.append("c", 1, [step(2)]);
    await trusted.close();
    const full = await fsStores({ dir, verifyAtOpen: true });
    expect((await full.events.listExecutions()).map((e) => [e.executionId, e.head])).toEqual([
      ["a", 5],
      ["c", 2],
    ]);
    expect((await full.events.read("a")).map((r) => r.seq)).toEqual([4, 5]);
    await full.close();
  });
});
