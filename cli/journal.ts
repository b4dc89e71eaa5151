// Reading a journal directory without the machines that wrote it: the catalogue, the records (archived
// and live), the snapshot, and the bytes each execution takes on disk.
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { fsStores, type FsStores } from "../adapters/fs/index.js";
import { entryName } from "../adapters/fs/directory.js";
import type { ExecutionInfo, StoredRecord } from "../index.js";
import { expandRecords } from "../stores/recordFormat.js";
import { NotFoundError } from "./errors.js";

/** Opens `dir` with fsStores after checking it is a journal: the CLI never creates one by accident. */
export async function openJournal(dir: string, options: { readOnly: boolean }): Promise<FsStores> {
  const kind = await stat(dir).then(
    (s) => (s.isDirectory() ? "dir" : "file"),
    () => "missing",
  );
  if (kind === "missing") {
    throw new NotFoundError(
      `no journal directory at ${dir}`,
      "Pass --dir <dir> or set LOOMWORK_DIR to the directory an app opened with fsStores({ dir }).",
    );
  }
  if (
    kind === "file" ||
    !(await stat(join(dir, "executions")).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  ) {
    throw new NotFoundError(
      `${dir} is not a loomwork journal directory (it has no executions/ folder)`,
      "Pass --dir <dir> pointing at the directory an app opened with fsStores({ dir }).",
    );
  }
  // An operator's tool: every log is recovered at open, so `ls` lists damage made while the directory was
  // closed even after a clean close (ADR 0008: an app's open defers that to each execution's first use).
  return fsStores({ dir, readOnly: options.readOnly, verifyAtOpen: true });
}

/** The catalogue entry, or a NotFoundError that suggests the ids that look alike. */
export async function requireExecution(stores: FsStores, executionId: string): Promise<ExecutionInfo> {
  const info = await stores.events.getExecution(executionId);
  if (info) return info;
  const all = (await stores.events.listExecutions()).map((e) => e.executionId);
  const near = all
    .map((id) => ({ id, d: distance(id, executionId) }))
    .filter(
      ({ id, d }) =>
        d <= Math.max(2, Math.floor(executionId.length / 4)) || (executionId.length >= 4 && id.includes(executionId)),
    )
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map(({ id }) => id);
  throw new NotFoundError(
    `no execution "${executionId}" in ${stores.dir}`,
    near.length
      ? `Did you mean ${near.map((id) => `"${id}"`).join(" or ")}?`
      : all.length
        ? "Run `loomwork ls` to list the executions."
        : "The journal has no executions yet.",
  );
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/**
 * Every record of an execution as stored (the stored form of schema 3: stores/recordFormat.ts), archived
 * ones first: what its bytes are measured on, and what sealed records are opened from. Throws
 * JournalCorruptionError on a damaged file.
 */
export async function readStoredRecords(stores: FsStores, executionId: string): Promise<StoredRecord[]> {
  const archived = (await stores.events.readArchives(executionId)).flatMap((segment) => segment.records);
  return [...archived, ...(await stores.events.read(executionId))];
}

/** Every record of an execution in the read form `app.log` returns, archived ones first (sealed ones stay sealed). */
export async function readRecords(stores: FsStores, executionId: string): Promise<StoredRecord[]> {
  return expandRecords(await readStoredRecords(stores, executionId));
}

/** UTF-8 bytes of a value's JSON text: the measure app.stats uses. */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");

/** Bytes of the execution's files (live log, snapshot, archive segments). */
export async function executionDiskBytes(dir: string, executionId: string): Promise<number> {
  const folder = join(dir, "executions", entryName(executionId));
  let total = 0;
  for (const name of await readdir(folder).catch(() => [] as string[]))
    total += (await stat(join(folder, name)).catch(() => ({ size: 0 }))).size;
  return total;
}

/** Seconds-resolution time of the execution's last write (its log file's mtime). */
export async function lastWrite(dir: string, executionId: string): Promise<number | undefined> {
  return stat(join(dir, "executions", entryName(executionId), "log")).then(
    (s) => s.mtimeMs,
    () => undefined,
  );
}

/** A sealed record (security.crypto): its payload is ciphertext; only seq, at, type and ids are readable. */
export const isSealed = (record: StoredRecord): boolean => typeof record.sealed === "string";
