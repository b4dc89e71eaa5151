// The journal on IndexedDB: every write is one readwrite transaction with strict durability, and the
// seq fence is checked inside it, so two tabs appending to one execution can never fork its log.
import { appendToCatalogue } from "../../stores/catalogue.js";
import { checkAppendIds, checkStoredId } from "../../stores/ids.js";
import type { Compression } from "../../stores/compression.js";
import { settle, unsettle } from "../../stores/settled.js";
import {
  EVENT_STORE_SPI_VERSION,
  type ArchiveSegment,
  type EventStore,
  type ExecutionInfo,
  type StoredRecord,
  type StoredSnapshot,
} from "../../stores/types.js";
import { announceCatalogueChange } from "./catalogueChanges.js";
import { issueAll, type IndexedDbConnection } from "./connection.js";
import { fromSnapshotValue, toSnapshotRow } from "./snapshotRow.js";

/**
 * What `getSnapshot` read beside the snapshot, in its one transaction: the head, and the records after the
 * snapshot. A resume asks for exactly these next (`head`, then `read(id, snapshot.seq + 1)`), so they are
 * served from here instead of two more transactions. Kept only until the next task (no other tab's write
 * can reach this page in between: its commit would be announced by a task), dropped by any write through
 * this store; the tail is served once.
 */
interface Prefetched {
  executionId: string;
  head: number | undefined;
  fromSeq: number;
  tail: StoredRecord[] | undefined;
}

/** The EventStore on IndexedDB (object stores `records`, `archives`, `snapshots`, `executions`). */
export class IndexedDbEventStore implements EventStore {
  readonly spiVersion = EVENT_STORE_SPI_VERSION;
  private prefetched: Prefetched | undefined;

  constructor(
    private readonly connection: IndexedDbConnection,
    private readonly releaseConnection: () => Promise<void>,
    /** How snapshot states are stored (`IndexedDbStoresOptions.compression`); reads take both forms. */
    private readonly compression: Compression = "none",
  ) {}

  private get keyRange(): typeof IDBKeyRange {
    return this.connection.deps.IDBKeyRange;
  }

  /** Every key of `executionId` in a store keyed [executionId, n], optionally capped at n <= through. */
  private range(executionId: string, from = -Infinity, through = Infinity): IDBKeyRange {
    return this.keyRange.bound([executionId, from], [executionId, through]);
  }

  async append(executionId: string, expectedSeq: number, records: StoredRecord[]): Promise<void> {
    checkAppendIds(executionId, records);
    this.prefetched = undefined;
    const what = `appending ${records.length} record(s) to execution "${executionId}" at seq ${expectedSeq + 1}`;
    const appended = await this.connection.transact(["records", "executions"], "readwrite", what, async (tx) => {
      const executions = tx.objectStore("executions");
      const previous = await executions.get(executionId);
      // The fence is read in the same transaction that writes: IndexedDB serialises readwrite
      // transactions over these stores, so a concurrent writer (another tab) sees our head or we see its.
      const info = appendToCatalogue(executionId, previous, expectedSeq, records);
      if (!info) return false;
      const store = tx.objectStore("records");
      await issueAll([
        // add, not put: an existing [executionId, seq] fails the transaction instead of being overwritten.
        ...records.map(
          (record) => () => addRecord(executionId, record, () => store.add(record, [executionId, record.seq])),
        ),
        () => executions.put(info),
      ]);
      return true;
    });
    if (appended) announceCatalogueChange(this.connection.name);
  }

  async read(executionId: string, fromSeq = 1): Promise<StoredRecord[]> {
    checkStoredId(executionId, "execution id");
    if (Number.isNaN(fromSeq)) return [];
    const kept = this.prefetched;
    if (kept?.tail && kept.executionId === executionId && kept.fromSeq === fromSeq) {
      const tail = kept.tail;
      kept.tail = undefined;
      return tail;
    }
    return this.connection.transact(["records"], "readonly", `reading execution "${executionId}"`, (tx) =>
      tx.objectStore("records").getAll(this.range(executionId, fromSeq)),
    );
  }

  async head(executionId: string): Promise<number> {
    checkStoredId(executionId, "execution id");
    const kept = this.prefetched;
    if (kept?.executionId === executionId && kept.head !== undefined) return kept.head;
    return (await this.getExecution(executionId))?.head ?? 0;
  }

  async getExecution(executionId: string): Promise<ExecutionInfo | undefined> {
    checkStoredId(executionId, "execution id");
    return this.connection.transact(["executions"], "readonly", `reading execution "${executionId}"`, (tx) =>
      tx.objectStore("executions").get(executionId),
    );
  }

  async listExecutions(): Promise<ExecutionInfo[]> {
    // Keys are compared as UTF-16 code units, the order JavaScript's < gives executionIds.
    return this.connection.transact(["executions"], "readonly", "listing executions", (tx) =>
      tx.objectStore("executions").getAll(),
    );
  }

  async putSnapshot(executionId: string, snapshot: StoredSnapshot): Promise<void> {
    checkStoredId(executionId, "execution id");
    this.prefetched = undefined;
    const what = `storing the snapshot of execution "${executionId}" at seq ${snapshot.seq}`;
    // Serialised (and compressed) before the transaction: awaiting the codec inside one would let it commit early.
    const stored = await toSnapshotRow(snapshot, this.compression);
    await this.connection.transact(["executions", "snapshots"], "readwrite", what, async (tx) => {
      if ((await tx.objectStore("executions").getKey(executionId)) === undefined) {
        throw new RangeError(`Execution "${executionId}" has no log; a snapshot needs one.`);
      }
      const snapshots = tx.objectStore("snapshots");
      const previous = await snapshots.get(executionId);
      if (!previous || previous.seq < snapshot.seq) await snapshots.put(stored, executionId);
    });
  }

  async getSnapshot(executionId: string): Promise<StoredSnapshot | undefined> {
    checkStoredId(executionId, "execution id");
    this.prefetched = undefined;
    // One transaction for what a resume reads: the snapshot, the head it is checked against, and the tail after it.
    const { decoding, head, tail } = await this.connection.transact(
      ["snapshots", "executions", "records"],
      "readonly",
      `reading the snapshot of "${executionId}"`,
      async (tx) => {
        const [stored, info] = await Promise.all([
          tx.objectStore("snapshots").get(executionId),
          tx.objectStore("executions").get(executionId),
        ]);
        const tailRead =
          stored && info && stored.seq <= info.head
            ? tx.objectStore("records").getAll(this.range(executionId, stored.seq + 1))
            : undefined;
        // Decoded while the tail is in flight: the JSON.parse of a version 2 row (the longest part of a
        // large snapshot's read) runs before fromSnapshotValue's first await, so it overlaps the getAll
        // and the commit instead of following them. Its rejection (a damaged row) is awaited outside.
        const decoding = stored ? settle(fromSnapshotValue(this.connection.name, executionId, stored)) : undefined;
        return { decoding, head: info?.head ?? 0, tail: await tailRead };
      },
    );
    if (!decoding) return undefined;
    const snapshot = await decoding.then(unsettle);
    // Kept until the next task, when another tab's write could have reached this page.
    const kept: Prefetched = { executionId, head, fromSeq: snapshot.seq + 1, tail };
    this.prefetched = kept;
    setTimeout(() => {
      if (this.prefetched === kept) this.prefetched = undefined;
    }, 0);
    return snapshot;
  }

  async archive(executionId: string, throughSeq: number): Promise<void> {
    checkStoredId(executionId, "execution id");
    this.prefetched = undefined;
    const what = `archiving execution "${executionId}" through seq ${throughSeq}`;
    await this.connection.transact(["executions", "records", "archives"], "readwrite", what, async (tx) => {
      const info = await tx.objectStore("executions").get(executionId);
      if (!info) throw new RangeError(`Execution "${executionId}" has no log to archive.`);
      const archives = tx.objectStore("archives");
      const last = await archives.openCursor(this.range(executionId), "prev");
      const archivedThrough = last?.value.toSeq ?? 0;
      if (!(throughSeq <= info.head && throughSeq > archivedThrough)) {
        throw new RangeError(
          `Execution "${executionId}": cannot archive through seq ${throughSeq}; archived through ${archivedThrough}, head ${info.head}.`,
        );
      }
      // The live prefix moves in this one transaction: a reader sees it live or archived, never both or neither.
      const records = tx.objectStore("records");
      const prefix = this.range(executionId, -Infinity, throughSeq);
      const moved = await records.getAll(prefix);
      const segment: ArchiveSegment = { fromSeq: archivedThrough + 1, toSeq: throughSeq, records: moved };
      await issueAll([() => archives.add(segment, [executionId, segment.fromSeq]), () => records.delete(prefix)]);
    });
  }

  async readArchives(executionId: string): Promise<ArchiveSegment[]> {
    checkStoredId(executionId, "execution id");
    return this.connection.transact(["archives"], "readonly", `reading the archives of "${executionId}"`, (tx) =>
      tx.objectStore("archives").getAll(this.range(executionId)),
    );
  }

  async deleteHistory(executionId: string): Promise<void> {
    checkStoredId(executionId, "execution id");
    this.prefetched = undefined;
    const what = `deleting the history of execution "${executionId}"`;
    const stores = ["records", "archives", "snapshots", "executions"] as const;
    await this.connection.transact([...stores], "readwrite", what, (tx) =>
      issueAll([
        () => tx.objectStore("records").delete(this.range(executionId)),
        () => tx.objectStore("archives").delete(this.range(executionId)),
        () => tx.objectStore("snapshots").delete(executionId),
        () => tx.objectStore("executions").delete(executionId),
      ]),
    );
    announceCatalogueChange(this.connection.name);
  }

  async close(): Promise<void> {
    await this.releaseConnection();
  }
}

/** Adds one record, naming it when IndexedDB cannot store it (a function, a symbol, a DOM node...). */
function addRecord(executionId: string, record: StoredRecord, add: () => Promise<unknown>): Promise<unknown> {
  try {
    return add();
  } catch (error) {
    if ((error as { name?: unknown } | null)?.name !== "DataCloneError") throw error;
    throw new TypeError(
      `Execution "${executionId}": record seq ${record.seq} (${record.type}) cannot be stored: ${(error as Error).message}. ` +
        `Journal records must be plain JSON.`,
      { cause: error },
    );
  }
}
