// A resume reads O(tail) bytes: the snapshot file marks where the log's tail starts. The mark is a hint:
// a stale, torn or forged one is detected and the read parses the whole log instead, never returning
// records the log does not hold at those seqs.
import { readFile, stat, truncate, writeFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { scanFrames } from "../../adapters/fs/framing.js";
import { encodeSnapshot, ExecutionPaths, type LogMark } from "../../adapters/fs/journalFiles.js";
import { JournalCorruptionError } from "../../stores/errors.js";
import type { StoredRecord } from "../../stores/types.js";
import { kill, removeTempDirs, spawnChild, started, step, tempDir, waitForOutput } from "./helpers.js";

afterAll(removeTempDirs);

const HEAD = 30;
const SNAPSHOT_SEQ = 20;
const record = (seq: number): StoredRecord =>
  seq === 1 ? started(1) : step(seq, { n: seq, pad: "z".repeat(seq * 7) });
const expected = (from: number) => Array.from({ length: HEAD - from + 1 }, (_, i) => record(from + i));

/** Execution "e": seqs 1..HEAD, one append each, and a snapshot at SNAPSHOT_SEQ (its mark points into the log). */
async function journal(): Promise<{ dir: string; paths: ExecutionPaths }> {
  const dir = await tempDir("tail");
  const stores = await fsStores({ dir });
  for (let seq = 1; seq <= HEAD; seq++) {
    await stores.events.append("e", seq - 1, [record(seq)]);
    if (seq === SNAPSHOT_SEQ) await stores.events.putSnapshot("e", { seq, at: 0, state: { through: seq } });
  }
  await stores.close();
  return { dir, paths: ExecutionPaths.of(dir, "e") };
}

const frames = async (path: string) => scanFrames(await readFile(path)).frames;

async function snapshotMark(paths: ExecutionPaths): Promise<LogMark> {
  const [frame] = await frames(paths.snapshot);
  return (frame!.value as { log: LogMark }).log;
}

async function resumeRead(dir: string): Promise<{ snapshotSeq?: number; tail: StoredRecord[]; whole: StoredRecord[] }> {
  const stores = await fsStores({ dir });
  try {
    const snapshot = await stores.events
      .getSnapshot("e")
      .catch((error: unknown) =>
        error instanceof JournalCorruptionError && error.kind === "snapshot" ? undefined : Promise.reject(error),
      );
    const tail = await stores.events.read("e", SNAPSHOT_SEQ + 1);
    return { ...(snapshot ? { snapshotSeq: snapshot.seq } : {}), tail, whole: await stores.events.read("e") };
  } finally {
    await stores.close();
  }
}

describe("fs tail marks", () => {
  it("writes into the snapshot the offset of the batch after it, in the live log file", async () => {
    const { paths } = await journal();
    const log = await frames(paths.log);
    const mark = await snapshotMark(paths);
    const header = log[0]!.value as { fileId: string };
    expect(mark.fileId).toBe(header.fileId);
    expect(mark.seq).toBe(SNAPSHOT_SEQ + 1);
    expect(log.find((f) => f.offset === mark.offset)?.value).toEqual([record(SNAPSHOT_SEQ + 1)]);
  });

  it("a fresh process reads only the tail: damage before the mark does not reach it, a whole read still reports it", async () => {
    const { dir, paths } = await journal();
    const log = await frames(paths.log);
    const bytes = await readFile(paths.log);
    // Flip a payload byte of seq 3's frame: well before the mark at seq 21.
    const at = log[3]!.offset + 20;
    bytes[at] = bytes[at]! ^ 0x01;
    await writeFile(paths.log, bytes);
    const stores = await fsStores({ dir });
    expect((await stores.events.getSnapshot("e"))?.seq).toBe(SNAPSHOT_SEQ);
    expect(await stores.events.read("e", SNAPSHOT_SEQ + 1)).toEqual(expected(SNAPSHOT_SEQ + 1));
    await expect(stores.events.read("e")).rejects.toBeInstanceOf(JournalCorruptionError);
    await stores.close();
  });

  const forged: [string, (mark: LogMark, log: { offset: number }[]) => unknown][] = [
    ["an offset inside a frame", (m) => ({ ...m, offset: m.offset + 5 })],
    ["a frame boundary of another seq", (m, log) => ({ ...m, offset: log[10]!.offset })],
    ["a seq that is not the frame's", (m) => ({ ...m, seq: m.seq - 3 })],
    [
      "a later frame claimed as the snapshot's next seq (records would be skipped)",
      (m, log) => ({ ...m, offset: log[24]!.offset }),
    ],
    ["an offset past the end of the log", (m) => ({ ...m, offset: m.offset + 1_000_000 })],
    ["the end of the log for a snapshot behind the head", (m) => ({ ...m, offset: 0, seq: HEAD + 1 })],
    ["another file's id (a log rewritten since)", (m) => ({ ...m, fileId: "0123456789abcdef" })],
    ["not a mark at all", () => "offset 12"],
  ];
  it.each(forged)("a stale or forged mark (%s) falls back to the whole log", async (_, forge) => {
    const { dir, paths } = await journal();
    const log = await frames(paths.log);
    const mark = await snapshotMark(paths);
    const state = { through: SNAPSHOT_SEQ };
    const forgedMark = forge(mark, log);
    const file = encodeSnapshot("e", { seq: SNAPSHOT_SEQ, at: 0, state }, forgedMark as LogMark);
    await writeFile(paths.snapshot, file);
    const read = await resumeRead(dir);
    expect(read.snapshotSeq).toBe(SNAPSHOT_SEQ);
    expect(read.tail.filter((r) => r.seq > SNAPSHOT_SEQ)).toEqual(expected(SNAPSHOT_SEQ + 1));
    expect(read.tail.every((r, i) => i === 0 || r.seq === read.tail[i - 1]!.seq + 1)).toBe(true);
    expect(read.whole).toEqual(expected(1));
  });

  it("a torn snapshot file is reported as a damaged snapshot and the tail is read from the log", async () => {
    const { dir, paths } = await journal();
    await truncate(paths.snapshot, (await stat(paths.snapshot)).size - 9);
    const read = await resumeRead(dir);
    expect(read.snapshotSeq).toBeUndefined();
    expect(read.tail).toEqual(expected(SNAPSHOT_SEQ + 1));
  });

  it("a snapshot written by a version without marks reads as before", async () => {
    const { dir, paths } = await journal();
    await writeFile(
      paths.snapshot,
      encodeSnapshot("e", { seq: SNAPSHOT_SEQ, at: 0, state: { through: SNAPSHOT_SEQ } }),
    );
    const read = await resumeRead(dir);
    expect(read.snapshotSeq).toBe(SNAPSHOT_SEQ);
    expect(read.tail).toEqual(expected(SNAPSHOT_SEQ + 1));
  });

  it("after an archive rewrote the log, the old mark is not used and the next snapshot marks the new file", async () => {
    const { dir, paths } = await journal();
    const old = await snapshotMark(paths);
    let stores = await fsStores({ dir });
    await stores.events.archive("e", 10);
    expect((await stores.events.getSnapshot("e"))?.seq).toBe(SNAPSHOT_SEQ);
    expect(await stores.events.read("e", SNAPSHOT_SEQ + 1)).toEqual(expected(SNAPSHOT_SEQ + 1));
    await stores.events.append("e", HEAD, [step(HEAD + 1)]);
    await stores.events.putSnapshot("e", { seq: HEAD, at: 0, state: { through: HEAD } });
    await stores.close();
    const mark = await snapshotMark(paths);
    expect(mark.fileId).not.toBe(old.fileId);
    expect(mark.seq).toBe(HEAD + 1);
    stores = await fsStores({ dir });
    await stores.events.getSnapshot("e");
    expect(await stores.events.read("e", HEAD + 1)).toEqual([step(HEAD + 1)]);
    expect(await stores.events.read("e", 11)).toEqual([...expected(11), step(HEAD + 1)]);
    await stores.close();
  });

  it.each([30, 90])(
    "after a SIGKILL past %i snapshots, every snapshot's tail read from its mark is the log's",
    async (snaps) => {
      const dir = await tempDir("tail-crash");
      const child = spawnChild("snapshotter.ts", [dir]);
      try {
        await waitForOutput(child, (out) => out.split("\n").filter((l) => l.startsWith("snap ")).length >= snaps);
      } finally {
        await kill(child);
      }
      for (let open = 0; open < 2; open++) {
        const stores = await fsStores({ dir });
        for (const id of ["p", "q"]) {
          const snapshot = await stores.events.getSnapshot(id);
          expect(snapshot).toBeDefined();
          const tail = await stores.events.read(id, snapshot!.seq + 1);
          const whole = await stores.events.read(id);
          expect(whole.map((r) => r.seq)).toEqual(Array.from({ length: whole.length }, (_, i) => i + 1));
          expect(tail).toEqual(whole.filter((r) => r.seq > snapshot!.seq));
          expect((await stores.events.getExecution(id))?.damaged).toBeUndefined();
        }
        await stores.close();
      }
    },
  );
});
