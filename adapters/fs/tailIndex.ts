// Where a log's tail starts, so a resume reads O(tail) bytes instead of the whole log.
//
// A mark { fileId, seq, offset } says: in the log file `fileId`, the batch frame whose first record is
// `seq` starts at byte `offset`. The store keeps the marks of the batches it wrote or read in this
// process (bounded), and writes one into each snapshot file: the batch holding the snapshot's seq + 1
// (or the end of the log when the snapshot is at its head). A fresh process reads the snapshot, then
// the log from its mark.
//
// A mark is a hint, never trusted blindly: it is used only for the file it names (a rewrite draws a new
// fileId), and the bytes read from it must be whole frames (checksums), the first batch must start at
// `seq`, each batch must continue the previous one, and the last must end at the durable head and size.
// Anything else (a stale or torn mark, a mark into a damaged log) makes the read parse the whole log,
// which reports real damage as it always did and rebuilds the marks.
import type { StoredRecord } from "../../stores/types.js";
import { scanFrames } from "./framing.js";
import { batchRecords, readRange, type LogMark } from "./journalFiles.js";

export { asLogMark, type LogMark } from "./journalFiles.js";

/** The most recent batch starts of one log file, in file order; bounded. */
export class BatchMarks {
  static readonly LIMIT = 256;
  private marks: { seq: number; offset: number }[] = [];

  constructor(private fileId: string) {}

  /** Forgets every mark: the log was rewritten under `fileId`. */
  reset(fileId: string): void {
    this.fileId = fileId;
    this.marks = [];
  }

  /** A batch just written at the end of the file. */
  add(seq: number, offset: number): void {
    const last = this.marks.at(-1);
    if (last && last.offset >= offset) return this.merge([{ seq, offset }]);
    this.marks.push({ seq, offset });
    if (this.marks.length > BatchMarks.LIMIT) this.marks = this.marks.slice(BatchMarks.LIMIT / 2);
  }

  /** Batch starts read from the file (verified), anywhere in it: merged in file order, the latest kept. */
  merge(batches: { seq: number; offset: number }[]): void {
    const byOffset = new Map<number, { seq: number; offset: number }>();
    for (const mark of [...this.marks, ...batches]) byOffset.set(mark.offset, mark);
    this.marks = [...byOffset.values()].sort((x, y) => x.offset - y.offset).slice(-BatchMarks.LIMIT);
  }

  /** The latest batch start at or before `seq` that lies inside the first `size` bytes. */
  find(seq: number, size: number): LogMark | undefined {
    for (let i = this.marks.length - 1; i >= 0; i--) {
      const mark = this.marks[i]!;
      if (mark.seq <= seq && mark.offset < size) return { fileId: this.fileId, ...mark };
    }
    return undefined;
  }

  /** The mark a snapshot at `seq` stores: its batch, or the end of the log when it is at the head. */
  forSnapshot(seq: number, head: number, size: number): LogMark | undefined {
    if (seq === head) return { fileId: this.fileId, seq: head + 1, offset: size };
    return this.find(seq + 1, size);
  }
}

/**
 * The records from `mark` to the end of the durable log (`size` bytes, ending at seq `head`), with the
 * batch starts met on the way; undefined when the mark does not hold for these bytes.
 */
export async function readFromMark(
  path: string,
  mark: LogMark,
  size: number,
  head: number,
): Promise<{ records: StoredRecord[]; batches: { seq: number; offset: number }[] } | undefined> {
  if (mark.offset > size) return undefined;
  if (mark.offset === size) return mark.seq === head + 1 ? { records: [], batches: [] } : undefined;
  const scan = scanFrames(await readRange(path, mark.offset, size), mark.offset);
  if (scan.bad || scan.end !== size) return undefined;
  const records: StoredRecord[] = [];
  const batches: { seq: number; offset: number }[] = [];
  let last = mark.seq - 1;
  for (const frame of scan.frames) {
    const batch = batchRecords(frame, last);
    if (typeof batch === "string") return undefined;
    batches.push({ seq: last + 1, offset: frame.offset });
    for (const record of batch) records.push(record);
    last += batch.length;
  }
  return last === head ? { records, batches } : undefined;
}
