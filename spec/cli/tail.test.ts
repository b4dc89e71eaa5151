// LogTail: what `loomwork follow` reads of a log another handle writes: whole records since the last
// read, nothing twice across an archive that rewrites the file, a frame cut short left for later, and a
// damaged middle frame reported.
import { appendFile, readFile, truncate, writeFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { ExecutionPaths } from "../../adapters/fs/journalFiles.js";
import { LogTail } from "../../cli/tail.js";
import { JournalCorruptionError } from "../../stores/errors.js";
import type { StoredRecord } from "../../stores/types.js";
import { tempDirs } from "../support/tempDirs.js";

const { tempDir, removeTempDirs } = tempDirs("cli-tail");
afterAll(removeTempDirs);

const event = (seq: number): StoredRecord => ({
  seq,
  at: 1_000 + seq,
  type: "loom.event.received",
  event: { type: "E", n: seq },
});
const started: StoredRecord = { seq: 1, at: 1_000, type: "loom.execution.started", logicId: "l", input: {} };
const seqs = (records: StoredRecord[]) => records.map((r) => r.seq);

describe("LogTail", () => {
  it("reads what was appended since, and nothing twice when an archive rewrites the log", async () => {
    const dir = await tempDir("archive");
    const stores = await fsStores({ dir });
    const paths = ExecutionPaths.of(dir, "x");
    await stores.events.append("x", 0, [started, event(2)]);
    const tail = new LogTail(paths.log, paths.name, 0);
    expect(seqs(await tail.read())).toEqual([1, 2]);
    expect(await tail.read()).toEqual([]);
    await stores.events.append("x", 2, [event(3)]);
    await stores.events.append("x", 3, [event(4), event(5)]);
    expect(seqs(await tail.read())).toEqual([3, 4, 5]);
    await stores.events.archive("x", 4); // a new log file holding seq 5 only
    await stores.events.append("x", 5, [event(6)]);
    expect(seqs(await tail.read())).toEqual([6]);
    await stores.close();
  });

  it("leaves a frame cut short for the next read, and reports a damaged middle frame", async () => {
    const dir = await tempDir("torn");
    const stores = await fsStores({ dir });
    const paths = ExecutionPaths.of(dir, "x");
    await stores.events.append("x", 0, [started]);
    await stores.events.append("x", 1, [event(2)]);
    await stores.close();
    const whole = await readFile(paths.log);
    const tail = new LogTail(paths.log, paths.name, 0);
    // The last frame half written, as a reader can see an append in flight.
    const cut = whole.length - 10;
    await truncate(paths.log, cut);
    expect(seqs(await tail.read())).toEqual([1]);
    await appendFile(paths.log, whole.subarray(cut));
    expect(seqs(await tail.read())).toEqual([2]);
    // A flipped byte in a frame that a later one follows is damage, not a write in flight.
    const copy = await tempDir("damaged");
    const other = await fsStores({ dir: copy });
    const otherPaths = ExecutionPaths.of(copy, "x");
    await other.events.append("x", 0, [started]);
    await other.events.append("x", 1, [event(2)]);
    await other.events.append("x", 2, [event(3)]);
    await other.close();
    const bytes = await readFile(otherPaths.log);
    bytes[whole.length - 5]! ^= 0xff; // inside the frame of seq 2 (the files match up to there), with seq 3's after it
    await writeFile(otherPaths.log, bytes);
    await expect(new LogTail(otherPaths.log, otherPaths.name, 0).read()).rejects.toThrow(JournalCorruptionError);
  });
});
