// The IndexedDB schema of one loomwork database. idb owns it (native version numbers, one upgrade
// function); the Dexie catalogue view opens the same database read-only and learns the schema from it.
import type { DBSchema, IDBPDatabase } from "idb";
import type {
  ArchiveSegment,
  ContentInfo,
  ExecutionInfo,
  StoredRecord,
  StoredSchedule,
  StoredSnapshot,
} from "../../stores/types.js";

/**
 * Native IndexedDB version of the schema below. Bump it, and add a step to `upgradeSchema`, for every
 * change; an older tab that meets a newer database refuses with `IndexedDbConnectionError`.
 *
 * - 1: the first layout.
 * - 2: snapshots are written as `SnapshotRow` (the state as its JSON text) instead of `StoredSnapshot`
 *   (the state as a structured value). No object store changes; rows of version 1 are read as they are,
 *   so a database upgraded from 1 mixes both until each execution's next snapshot replaces its row.
 * - 3: the `schedules` store (loomwork/schedules). Nothing else changes; an older tab refuses the database.
 */
export const SCHEMA_VERSION = 3;

/**
 * A snapshot as version 2 writes it: the state as its JSON text (`text`), or, compressed, the packed
 * bytes of that text (stores/compression.ts). A string is copied in one piece by structured clone and
 * parsed once, where a state tree is walked node by node on both sides of the clone.
 */
export interface SnapshotRow {
  seq: number;
  at: number;
  text: string | Uint8Array;
}

/** What the `snapshots` store holds: a version 2 row, or a version 1 one (`StoredSnapshot`, `state` packed or not). */
export type SnapshotValue = SnapshotRow | StoredSnapshot;

/** Object stores; every key noted is the out-of-line key unless a keyPath is named. */
export interface LoomDbSchema extends DBSchema {
  /** The live journal: key [executionId, seq], value the record exactly as appended. */
  records: { key: [string, number]; value: StoredRecord };
  /** Archive segments: key [executionId, fromSeq]. */
  archives: { key: [string, number]; value: ArchiveSegment };
  /** The newest snapshot of each execution: key executionId. */
  snapshots: { key: string; value: SnapshotValue };
  /** The catalogue (keyPath executionId), written in the same transaction as the records it folds. */
  executions: {
    key: string;
    value: ExecutionInfo;
    indexes: { subject: string; status: string; startedAt: number };
  };
  /** Blob metadata (keyPath address); kept apart from the bytes so listing never loads bytes. */
  blobMeta: { key: string; value: ContentInfo };
  /** Blob bytes: key address. */
  blobBytes: { key: string; value: Uint8Array };
  /** Per-subject 32-byte keys: key subject. */
  keys: { key: string; value: Uint8Array };
  /** Tombstones of destroyed keys (keyPath subject): a subject listed here never gets a key again. */
  erasedSubjects: { key: string; value: { subject: string } };
  /** Counters, e.g. the touch clock: key name. */
  meta: { key: string; value: number };
  /** Durable schedules (keyPath id), each written by a compare-and-set on its revision. */
  schedules: { key: string; value: StoredSchedule };
}

export type LoomStoreName =
  | "records"
  | "archives"
  | "snapshots"
  | "executions"
  | "blobMeta"
  | "blobBytes"
  | "keys"
  | "erasedSubjects"
  | "meta"
  | "schedules";

/** The catalogue's object store; the Dexie view reads it as a table of the same name. */
export const EXECUTIONS_STORE = "executions";
/** Row of `meta` holding the touch clock. Absent means 1, the clock's first value. */
export const TOUCH_CLOCK_KEY = "touchClock";

/**
 * Creates whatever object store is missing. Idempotent by construction, so a database created
 * empty by another opener (e.g. a devtools session) is completed instead of left unusable. The step
 * from version 1 to 2 changes no store (see `SCHEMA_VERSION`): old snapshot rows stay readable.
 */
export function upgradeSchema(db: IDBPDatabase<LoomDbSchema>): void {
  const has = (name: LoomStoreName) => db.objectStoreNames.contains(name);
  if (!has("records")) db.createObjectStore("records");
  if (!has("archives")) db.createObjectStore("archives");
  if (!has("snapshots")) db.createObjectStore("snapshots");
  if (!has("executions")) {
    const executions = db.createObjectStore("executions", { keyPath: "executionId" });
    executions.createIndex("subject", "subject");
    executions.createIndex("status", "status");
    executions.createIndex("startedAt", "startedAt");
  }
  if (!has("blobMeta")) db.createObjectStore("blobMeta", { keyPath: "address" });
  if (!has("blobBytes")) db.createObjectStore("blobBytes");
  if (!has("keys")) db.createObjectStore("keys");
  if (!has("erasedSubjects")) db.createObjectStore("erasedSubjects", { keyPath: "subject" });
  if (!has("meta")) db.createObjectStore("meta");
  if (!has("schedules")) db.createObjectStore("schedules", { keyPath: "id" });
}
