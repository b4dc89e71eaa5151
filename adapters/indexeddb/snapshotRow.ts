// Snapshot rows of the `snapshots` object store: written as version 2 (`SnapshotRow`, the state as JSON
// text), read in both forms (schema.ts, SCHEMA_VERSION). The text costs one JSON.stringify before the
// write transaction and one JSON.parse after the read; structured clone then copies a single string
// instead of walking the state tree (fake-indexeddb clones it on every get; Chromium serialises it).
import {
  compressBytes,
  decompressBytes,
  isCompressed,
  unpackState,
  type Compression,
} from "../../stores/compression.js";
import { JournalCorruptionError } from "../../stores/errors.js";
import type { StoredSnapshot } from "../../stores/types.js";
import type { SnapshotRow, SnapshotValue } from "./schema.js";

/** The row `putSnapshot` stores: the state's JSON text, packed when `compression` says so and that is smaller. */
export async function toSnapshotRow(snapshot: StoredSnapshot, compression: Compression): Promise<SnapshotRow> {
  const text = JSON.stringify(snapshot.state);
  if (typeof text !== "string") throw new TypeError(`A snapshot's state must be JSON, got ${typeof snapshot.state}.`);
  const row: SnapshotRow = { seq: snapshot.seq, at: snapshot.at, text };
  if (compression === "none") return row;
  const plain = new TextEncoder().encode(text);
  const packed = await compressBytes(plain);
  return packed.length < plain.length ? { ...row, text: packed } : row;
}

const isRow = (value: SnapshotValue): value is SnapshotRow => "text" in value && !("state" in value);

/**
 * The snapshot a stored row holds, of either version. A version 2 row whose text does not parse (or
 * whose packed bytes do not inflate) is a damaged cache: `JournalCorruptionError { kind: "snapshot" }`,
 * on which the runtime replays the log instead.
 */
export async function fromSnapshotValue(
  database: string,
  executionId: string,
  value: SnapshotValue,
): Promise<StoredSnapshot> {
  if (!isRow(value)) return { ...value, state: await unpackState(value.state) };
  let state: unknown;
  try {
    const text =
      typeof value.text === "string"
        ? value.text
        : new TextDecoder("utf-8", { fatal: true }).decode(await decompressBytes(value.text));
    state = JSON.parse(text);
  } catch (error) {
    const what =
      typeof value.text === "string" || isCompressed(value.text) ? "does not parse" : "is neither text nor packed text";
    throw new JournalCorruptionError(
      `indexeddb:${database}/snapshots/${executionId}`,
      0,
      `the snapshot's state ${what} (${(error as Error).message})`,
      {
        kind: "snapshot",
        remedy: 'The next snapshot replaces it (docs/storage.md, "Recovery").',
      },
    );
  }
  return { seq: value.seq, at: value.at, state };
}
