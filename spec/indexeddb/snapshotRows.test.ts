// Snapshot rows across schema versions: version 2 keeps a snapshot's state as its JSON text; a database
// written by version 1 (the state as a structured value, or its packed JSON bytes) opens, upgrades and
// reads as it was written, and its rows are replaced by version 2 rows as new snapshots arrive.
import { IDBFactory } from "fake-indexeddb";
import { describe, expect, it } from "vitest";
import { SCHEMA_VERSION } from "../../adapters/indexeddb/index.js";
import { appendToCatalogue } from "../../stores/catalogue.js";
import { isCompressed, packState } from "../../stores/compression.js";
import { JournalCorruptionError } from "../../stores/errors.js";
import type { StoredRecord } from "../../stores/types.js";
import { openFresh, settle, started, step } from "./helpers.js";

const state = (n: number) => ({
  value: "working",
  context: {
    n,
    transcript: Array.from({ length: 30 }, (_, i) => ({
      role: "tool",
      content: `output ${i} of ${n}, again and again`,
    })),
  },
});

/** Version 1's upgrade, as it shipped: every store of the first layout. */
function createVersion1Stores(db: IDBDatabase): void {
  for (const name of ["records", "archives", "snapshots", "blobBytes", "keys", "meta"]) db.createObjectStore(name);
  const executions = db.createObjectStore("executions", { keyPath: "executionId" });
  executions.createIndex("subject", "subject");
  executions.createIndex("status", "status");
  executions.createIndex("startedAt", "startedAt");
  db.createObjectStore("blobMeta", { keyPath: "address" });
  db.createObjectStore("erasedSubjects", { keyPath: "subject" });
}

/** Writes `name` as loomwork's schema version 1 did: records, catalogue rows and snapshots `{ seq, at, state }`. */
async function writeVersion1(
  factory: IDBFactory,
  name: string,
  executions: Record<string, { records: StoredRecord[]; snapshot: { seq: number; at: number; state: unknown } }>,
): Promise<void> {
  const open = factory.open(name, 1);
  open.onupgradeneeded = () => createVersion1Stores(open.result);
  const db = await settle(open);
  const tx = db.transaction(["records", "executions", "snapshots"], "readwrite");
  for (const [id, { records, snapshot }] of Object.entries(executions)) {
    for (const record of records) tx.objectStore("records").add(record, [id, record.seq]);
    tx.objectStore("executions").put(appendToCatalogue(id, undefined, 0, records));
    tx.objectStore("snapshots").put(snapshot, id);
  }
  await new Promise<void>((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
  });
  db.close();
}

async function rawDb(factory: IDBFactory, name: string): Promise<IDBDatabase> {
  return settle(factory.open(name));
}

async function rawGet(factory: IDBFactory, name: string, store: string, key: string): Promise<unknown> {
  const db = await rawDb(factory, name);
  try {
    return await settle(db.transaction(store, "readonly").objectStore(store).get(key));
  } finally {
    db.close();
  }
}

async function rawPut(factory: IDBFactory, name: string, store: string, key: string, value: unknown): Promise<void> {
  const db = await rawDb(factory, name);
  try {
    await settle(db.transaction(store, "readwrite").objectStore(store).put(value, key));
  } finally {
    db.close();
  }
}

describe("IndexedDB snapshot rows", () => {
  it("writes version 2 rows: the state as its JSON text, read back equal", async () => {
    const { stores, factory, name } = await openFresh({ locks: null });
    await stores.events.append("e", 0, [started(1), step(2)]);
    await stores.events.putSnapshot("e", { seq: 2, at: 7, state: state(1) });
    expect(SCHEMA_VERSION).toBe(3); // 3 added the schedules store; snapshot rows are still version 2's
    expect(await rawGet(factory, name, "snapshots", "e")).toEqual({ seq: 2, at: 7, text: JSON.stringify(state(1)) });
    expect(await stores.events.getSnapshot("e")).toEqual({ seq: 2, at: 7, state: state(1) });
    // An older snapshot never replaces a newer one, whatever the row's form.
    await stores.events.putSnapshot("e", { seq: 1, at: 8, state: state(0) });
    expect(await stores.events.getSnapshot("e")).toEqual({ seq: 2, at: 7, state: state(1) });
    await stores.close();
  });

  it("opens a database written by schema version 1, reads its plain and packed snapshots, and replaces them with version 2 rows", async () => {
    const factory = new IDBFactory();
    const name = "written-by-v1";
    const packed = await packState(state(2), "deflate");
    expect(packed instanceof Uint8Array && isCompressed(packed)).toBe(true);
    await writeVersion1(factory, name, {
      plain: { records: [started(1), step(2), step(3)], snapshot: { seq: 2, at: 20, state: state(1) } },
      packed: { records: [started(1), step(2)], snapshot: { seq: 1, at: 10, state: packed } },
    });

    for (const compression of ["none", "deflate"] as const) {
      const { stores } = await openFresh({ indexedDB: factory, name, locks: null, compression });
      expect(await stores.events.getSnapshot("plain")).toEqual({ seq: 2, at: 20, state: state(1) });
      expect(await stores.events.getSnapshot("packed")).toEqual({ seq: 1, at: 10, state: state(2) });
      expect((await stores.events.read("plain", 3)).map((r) => r.seq)).toEqual([3]);
      expect(await stores.events.head("plain")).toBe(3);
      await stores.close();
    }
    const upgraded = await rawDb(factory, name);
    expect(upgraded.version).toBe(SCHEMA_VERSION);
    upgraded.close();

    // A later snapshot replaces the version 1 row with a version 2 one; an earlier one does not.
    const { stores } = await openFresh({ indexedDB: factory, name, locks: null, compression: "deflate" });
    await stores.events.putSnapshot("packed", { seq: 1, at: 11, state: state(9) });
    expect(await stores.events.getSnapshot("packed")).toEqual({ seq: 1, at: 10, state: state(2) });
    await stores.events.putSnapshot("plain", { seq: 3, at: 30, state: state(3) });
    const row = (await rawGet(factory, name, "snapshots", "plain")) as { text: unknown; state?: unknown };
    expect(row.state).toBeUndefined();
    expect(row.text instanceof Uint8Array && isCompressed(row.text)).toBe(true);
    expect(await stores.events.getSnapshot("plain")).toEqual({ seq: 3, at: 30, state: state(3) });
    await stores.close();
  });

  it("refuses a damaged version 2 row as a damaged snapshot (the runtime then replays the log)", async () => {
    const { stores, factory, name } = await openFresh({ locks: null });
    await stores.events.append("e", 0, [started(1)]);
    await stores.events.append("f", 0, [started(1)]);
    await stores.close();
    await rawPut(factory, name, "snapshots", "e", { seq: 1, at: 0, text: '{"value": "work' });
    await rawPut(factory, name, "snapshots", "f", { seq: 1, at: 0, text: Uint8Array.of(1, 2, 3) });
    const { stores: reopened } = await openFresh({ indexedDB: factory, name, locks: null });
    for (const id of ["e", "f"]) {
      const error = await reopened.events.getSnapshot(id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JournalCorruptionError);
      expect(error).toMatchObject({ kind: "snapshot", file: `indexeddb:${name}/snapshots/${id}` });
    }
    await reopened.close();
  });

  it("refuses a state that is not JSON before writing anything", async () => {
    const { stores } = await openFresh({ locks: null });
    await stores.events.append("e", 0, [started(1)]);
    await expect(stores.events.putSnapshot("e", { seq: 1, at: 0, state: { big: 1n } })).rejects.toBeInstanceOf(
      TypeError,
    );
    await expect(stores.events.putSnapshot("e", { seq: 1, at: 0, state: undefined })).rejects.toBeInstanceOf(TypeError);
    expect(await stores.events.getSnapshot("e")).toBeUndefined();
    await stores.close();
  });
});
