// Content-addressed blobs on IndexedDB, with a persisted touch clock for the conditional delete the
// content sweep relies on (ADR 0140).
import { contentAddress } from "../../stores/bytes.js";
import { maybeCompress, unpackBlob, type Compression } from "../../stores/compression.js";
import { JournalCorruptionError } from "../../stores/errors.js";
import { CONTENT_STORE_SPI_VERSION, type ContentInfo, type ContentStore } from "../../stores/types.js";
import { issueAll, type IndexedDbConnection } from "./connection.js";
import { TOUCH_CLOCK_KEY } from "./schema.js";

/** How many blobs `list()` reads per transaction unless told otherwise. */
export const DEFAULT_LIST_PAGE_SIZE = 256;

/** The ContentStore on IndexedDB (object stores `blobMeta`, `blobBytes`, `meta`). */
export class IndexedDbContentStore implements ContentStore {
  readonly spiVersion = CONTENT_STORE_SPI_VERSION;
  readonly sealsContent = false;

  constructor(
    private readonly connection: IndexedDbConnection,
    private readonly releaseConnection: () => Promise<void>,
    private readonly listPageSize = DEFAULT_LIST_PAGE_SIZE,
    /** How new blobs are stored (`IndexedDbStoresOptions.compression`); `get` takes both forms. */
    private readonly compression: Compression = "none",
  ) {}

  async put(bytes: Uint8Array): Promise<string> {
    // Hash before any transaction: awaiting WebCrypto inside one would let it commit early.
    const address = await contentAddress(bytes);
    // Known bytes only get a new touch time. Relaxed durability is enough: a touch lost to a crash
    // only mattered to a sweep running in that same crashed session; a later sweep takes a later
    // cutoff and re-reads the logs, which are written strictly.
    const touched = await this.connection.transact(
      ["blobMeta", "meta"],
      "readwrite",
      `touching blob ${address}`,
      async (tx) => {
        const meta = tx.objectStore("blobMeta");
        const info = await meta.get(address);
        if (!info) return false;
        const clock = (await tx.objectStore("meta").get(TOUCH_CLOCK_KEY)) ?? 1;
        if (info.touchedAt !== clock) await meta.put({ ...info, touchedAt: clock });
        return true;
      },
      "relaxed",
    );
    if (touched) return address;
    const what = `storing a blob of ${bytes.byteLength} bytes (${address})`;
    // Compressed (when asked and smaller) before the transaction, as the hash is; the size kept is the plain one.
    const stored = await maybeCompress(bytes, this.compression);
    await this.connection.transact(["blobMeta", "blobBytes", "meta"], "readwrite", what, async (tx) => {
      const meta = tx.objectStore("blobMeta");
      const info = await meta.get(address);
      // The touch time is read in the writing transaction, serialised after any touchClock() that
      // returned before this put started: hence touchedAt >= that clock value.
      const clock = (await tx.objectStore("meta").get(TOUCH_CLOCK_KEY)) ?? 1;
      if (info) {
        await meta.put({ ...info, touchedAt: clock });
        return;
      }
      const copy = stored.slice();
      await issueAll([
        () => tx.objectStore("blobBytes").put(copy, address),
        () => meta.put({ address, size: bytes.byteLength, touchedAt: clock }),
      ]);
    });
    return address;
  }

  async get(address: string): Promise<Uint8Array | undefined> {
    const bytes = await this.connection.transact(["blobBytes"], "readonly", `reading blob ${address}`, (tx) =>
      tx.objectStore("blobBytes").get(address),
    );
    if (!bytes) return undefined;
    // Structured clone may hand back a view of a larger buffer in some engines: return a tight copy.
    const plain = await unpackBlob(new Uint8Array(bytes), address, contentAddress);
    if (!plain)
      throw new JournalCorruptionError(
        `indexeddb:blobBytes/${address}`,
        0,
        "the blob's compressed bytes do not inflate to its address",
      );
    return plain;
  }

  async has(address: string): Promise<boolean> {
    const key = await this.connection.transact(["blobMeta"], "readonly", `looking up blob ${address}`, (tx) =>
      tx.objectStore("blobMeta").getKey(address),
    );
    return key !== undefined;
  }

  async delete(address: string): Promise<boolean> {
    return this.connection.transact(["blobMeta", "blobBytes"], "readwrite", `deleting blob ${address}`, async (tx) => {
      const meta = tx.objectStore("blobMeta");
      if ((await meta.getKey(address)) === undefined) return false;
      await issueAll([() => meta.delete(address), () => tx.objectStore("blobBytes").delete(address)]);
      return true;
    });
  }

  async deleteIfUntouchedSince(address: string, cutoff: number): Promise<boolean> {
    const what = `deleting blob ${address} if untouched since ${cutoff}`;
    // Check and delete in one readwrite transaction over blobMeta: a concurrent put of the same
    // address is serialised before (we see its touch) or after (it re-creates the blob).
    return this.connection.transact(["blobMeta", "blobBytes"], "readwrite", what, async (tx) => {
      const meta = tx.objectStore("blobMeta");
      const info = await meta.get(address);
      if (!info || info.touchedAt >= cutoff) return false;
      await issueAll([() => meta.delete(address), () => tx.objectStore("blobBytes").delete(address)]);
      return true;
    });
  }

  async touchClock(): Promise<number> {
    // Strict: the clock must never hand out a value twice, even across a crash.
    return this.connection.transact(["meta"], "readwrite", "advancing the touch clock", async (tx) => {
      const meta = tx.objectStore("meta");
      const next = ((await meta.get(TOUCH_CLOCK_KEY)) ?? 1) + 1;
      await meta.put(next, TOUCH_CLOCK_KEY);
      return next;
    });
  }

  async *list(): AsyncIterable<ContentInfo> {
    // One short read-only transaction per page, none held across a yield (the consumer may await
    // anything between items); each page continues after the last address seen.
    let after: string | undefined;
    while (true) {
      const query = after === undefined ? undefined : this.connection.deps.IDBKeyRange.lowerBound(after, true);
      const page = await this.connection.transact(["blobMeta"], "readonly", "listing blobs", (tx) =>
        tx.objectStore("blobMeta").getAll(query, this.listPageSize),
      );
      for (const info of page) yield info;
      if (page.length < this.listPageSize) return;
      after = page[page.length - 1]!.address;
    }
  }

  async close(): Promise<void> {
    await this.releaseConnection();
  }
}
