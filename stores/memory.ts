import { appendToCatalogue } from "./catalogue.js";
import { checkAppendIds, checkStoredId } from "./ids.js";
import { contentAddress } from "./bytes.js";
import { SubjectErasedError } from "./errors.js";
import { MemoryScheduleStore } from "./memorySchedules.js";
import {
  CONTENT_STORE_SPI_VERSION,
  EVENT_STORE_SPI_VERSION,
  KEY_STORE_SPI_VERSION,
  type ArchiveSegment,
  type ContentInfo,
  type ContentStore,
  type EventStore,
  type ExecutionInfo,
  type StoredRecord,
  type KeyStore,
  type Stores,
  type StoredSnapshot,
} from "./types.js";

// Every value crosses the port as a deep copy, as it would through a real store: a caller that
// mutates what it appended or read must not change the journal. Records and catalogue entries are plain
// JSON: plain objects and arrays are copied here, several times faster than structuredClone for a
// macrostep's few small records, and with far less garbage; anything else (a class instance, a typed
// array, a Date, a function) goes through structuredClone, which copies or refuses it as before.
function clone<T>(value: T): T {
  if (value === null || (typeof value !== "object" && typeof value !== "function" && typeof value !== "symbol"))
    return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = clone(value[i] as unknown);
    return out as T;
  }
  const proto: unknown = typeof value === "object" ? Object.getPrototypeOf(value) : undefined;
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // An own "__proto__" key (JSON.parse makes them) stays a key: an assignment would set the prototype.
    if (key === "__proto__")
      Object.defineProperty(out, key, { value: clone(item), enumerable: true, writable: true, configurable: true });
    else out[key] = clone(item);
  }
  return out as T;
}

// A snapshot is kept as its JSON text, written once: every read is a fresh JSON.parse (a copy, as a caller
// of the fs or PostgreSQL store gets; several times cheaper than structuredClone of a large state). The SPI's
// state is JSON-serialisable; as through those stores, a property whose value is `undefined` reads as absent.
interface KeptSnapshot {
  seq: number;
  json: string;
}

interface MemoryHistory {
  live: StoredRecord[];
  archives: ArchiveSegment[];
  snapshot?: KeptSnapshot;
  info: ExecutionInfo;
}

/** The reference EventStore: in memory, every operation atomic. */
export class MemoryEventStore implements EventStore {
  readonly spiVersion = EVENT_STORE_SPI_VERSION;
  private readonly histories = new Map<string, MemoryHistory>();

  async append(executionId: string, expectedSeq: number, records: StoredRecord[]): Promise<void> {
    checkAppendIds(executionId, records);
    const history = this.histories.get(executionId);
    const info = appendToCatalogue(executionId, history?.info, expectedSeq, records);
    if (!info) return;
    const copies = clone(records);
    if (history) {
      history.live.push(...copies);
      history.info = info;
    } else {
      this.histories.set(executionId, { live: copies, archives: [], info });
    }
  }

  async read(executionId: string, fromSeq = 1): Promise<StoredRecord[]> {
    checkStoredId(executionId, "execution id");
    const live = this.histories.get(executionId)?.live ?? [];
    return clone(live.filter((r) => r.seq >= fromSeq));
  }

  async head(executionId: string): Promise<number> {
    checkStoredId(executionId, "execution id");
    return this.histories.get(executionId)?.info.head ?? 0;
  }

  async getExecution(executionId: string): Promise<ExecutionInfo | undefined> {
    checkStoredId(executionId, "execution id");
    const info = this.histories.get(executionId)?.info;
    return info && clone(info);
  }

  async listExecutions(): Promise<ExecutionInfo[]> {
    return [...this.histories.values()]
      .map((h) => clone(h.info))
      .sort((a, b) => (a.executionId < b.executionId ? -1 : 1));
  }

  async putSnapshot(executionId: string, snapshot: StoredSnapshot): Promise<void> {
    checkStoredId(executionId, "execution id");
    const history = this.histories.get(executionId);
    if (!history) throw new RangeError(`Execution "${executionId}" has no log; a snapshot needs one.`);
    if (!history.snapshot || history.snapshot.seq < snapshot.seq)
      history.snapshot = { seq: snapshot.seq, json: JSON.stringify(snapshot) };
  }

  async getSnapshot(executionId: string): Promise<StoredSnapshot | undefined> {
    checkStoredId(executionId, "execution id");
    const snapshot = this.histories.get(executionId)?.snapshot;
    return snapshot && (JSON.parse(snapshot.json) as StoredSnapshot);
  }

  async archive(executionId: string, throughSeq: number): Promise<void> {
    checkStoredId(executionId, "execution id");
    const history = this.histories.get(executionId);
    if (!history) throw new RangeError(`Execution "${executionId}" has no log to archive.`);
    const archivedThrough = history.archives.at(-1)?.toSeq ?? 0;
    if (throughSeq > history.info.head || throughSeq <= archivedThrough) {
      throw new RangeError(
        `Execution "${executionId}": cannot archive through seq ${throughSeq}; archived through ${archivedThrough}, head ${history.info.head}.`,
      );
    }
    const moved = history.live.filter((r) => r.seq <= throughSeq);
    history.live = history.live.filter((r) => r.seq > throughSeq);
    history.archives.push({ fromSeq: archivedThrough + 1, toSeq: throughSeq, records: moved });
  }

  async readArchives(executionId: string): Promise<ArchiveSegment[]> {
    checkStoredId(executionId, "execution id");
    return clone(this.histories.get(executionId)?.archives ?? []);
  }

  async deleteHistory(executionId: string): Promise<void> {
    checkStoredId(executionId, "execution id");
    this.histories.delete(executionId);
  }
}

interface MemoryBlob {
  bytes: Uint8Array;
  touchedAt: number;
}

/** The reference ContentStore: content-addressed (SHA-256), with a logical touch clock. */
export class MemoryContentStore implements ContentStore {
  readonly spiVersion = CONTENT_STORE_SPI_VERSION;
  readonly sealsContent = false;
  private readonly blobs = new Map<string, MemoryBlob>();
  // A logical clock: touchClock() hands out T and moves past it, so any later put touches at > T.
  private clock = 1;

  async put(bytes: Uint8Array): Promise<string> {
    const address = await contentAddress(bytes);
    const existing = this.blobs.get(address);
    const touchedAt = this.clock;
    if (existing) existing.touchedAt = touchedAt;
    else this.blobs.set(address, { bytes: bytes.slice(), touchedAt });
    return address;
  }

  async get(address: string): Promise<Uint8Array | undefined> {
    return this.blobs.get(address)?.bytes.slice();
  }

  async has(address: string): Promise<boolean> {
    return this.blobs.has(address);
  }

  async delete(address: string): Promise<boolean> {
    return this.blobs.delete(address);
  }

  async deleteIfUntouchedSince(address: string, cutoff: number): Promise<boolean> {
    const blob = this.blobs.get(address);
    if (!blob || blob.touchedAt >= cutoff) return false;
    return this.blobs.delete(address);
  }

  async touchClock(): Promise<number> {
    return ++this.clock;
  }

  async *list(): AsyncIterable<ContentInfo> {
    for (const [address, blob] of [...this.blobs])
      yield { address, size: blob.bytes.byteLength, touchedAt: blob.touchedAt };
  }
}

/** The reference KeyStore: random 32-byte keys in memory; a destroyed subject stays destroyed. */
export class MemoryKeyStore implements KeyStore {
  readonly spiVersion = KEY_STORE_SPI_VERSION;
  private readonly keys = new Map<string, Uint8Array>();
  private readonly destroyed = new Set<string>();

  async getOrCreate(subject: string): Promise<Uint8Array> {
    checkStoredId(subject, "subject");
    if (this.destroyed.has(subject)) throw new SubjectErasedError(subject);
    let key = this.keys.get(subject);
    if (!key) {
      key = crypto.getRandomValues(new Uint8Array(32));
      this.keys.set(subject, key);
    }
    return key.slice();
  }

  async get(subject: string): Promise<Uint8Array | undefined> {
    checkStoredId(subject, "subject");
    return this.keys.get(subject)?.slice();
  }

  async destroy(subject: string): Promise<void> {
    checkStoredId(subject, "subject");
    const key = this.keys.get(subject);
    key?.fill(0);
    this.keys.delete(subject);
    this.destroyed.add(subject);
  }

  async isDestroyed(subject: string): Promise<boolean> {
    checkStoredId(subject, "subject");
    return this.destroyed.has(subject);
  }
}

/**
 * In-memory stores: the reference implementation of every SPI, for tests and for apps whose
 * executions need not outlive the process. Two apps built over the same object share executions.
 *
 * @example
 * const stores = memoryStores();
 * const app = createApp(defineConfig({ stores, effects }));
 */
export function memoryStores(): Stores {
  return {
    events: new MemoryEventStore(),
    content: new MemoryContentStore(),
    keys: new MemoryKeyStore(),
    schedules: new MemoryScheduleStore(),
  };
}
