// Tailing one execution's live log without the writer lock: the frames appended since the last read,
// as whole records. A frame still being written (a torn tail) is left for the next read; a rewritten log
// (an archive replaces it under a new inode) is read again from its start, skipping the seqs already seen.
import { stat } from "node:fs/promises";
import { scanFrames } from "../adapters/fs/framing.js";
import { batchRecords, headerProblem, readRange, type LogHeader } from "../adapters/fs/journalFiles.js";
import { JournalCorruptionError } from "../stores/errors.js";
import type { StoredRecord } from "../stores/types.js";

export class LogTail {
  private offset = 0;
  private inode: number | undefined;
  /** The seq of the last record in the bytes read so far (the file's, not what was shown). */
  private fileHead = 0;

  constructor(
    private readonly path: string,
    private readonly name: string,
    /** The last seq already shown: records up to it are skipped. */
    private seen: number,
  ) {}

  /** The records appended since the last call (none while nothing new is whole). */
  async read(): Promise<StoredRecord[]> {
    const file = await stat(this.path).catch(() => undefined);
    if (!file) return []; // between an archive's rename and the next read
    if (file.ino !== this.inode || file.size < this.offset) {
      this.inode = file.ino;
      this.offset = 0;
    }
    if (file.size === this.offset) return [];
    const scan = scanFrames(await readRange(this.path, this.offset, file.size), this.offset);
    if (scan.bad && !scan.bad.torn) throw new JournalCorruptionError(this.path, scan.bad.offset, scan.bad.reason);
    let frames = scan.frames;
    if (this.offset === 0) {
      const [header] = frames;
      if (!header) return [];
      const problem = headerProblem(header.value, this.name);
      if (problem) throw new JournalCorruptionError(this.path, 0, problem);
      const { archivedThrough } = header.value as LogHeader;
      this.fileHead = archivedThrough;
      frames = frames.slice(1);
    }
    const fresh: StoredRecord[] = [];
    for (const frame of frames) {
      const records = batchRecords(frame, this.fileHead);
      if (typeof records === "string") throw new JournalCorruptionError(this.path, frame.offset, records);
      this.fileHead += records.length;
      for (const record of records) if (record.seq > this.seen) fresh.push(record);
    }
    this.offset = scan.end;
    this.seen = Math.max(this.seen, this.fileHead);
    return fresh;
  }
}
