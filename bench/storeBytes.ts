// What each store holds, in exact bytes: files on disk for fs (apparent size, and allocated blocks as
// `du` counts them), the JSON size of every stored value for IndexedDB (typed arrays by byte length),
// and the records', snapshot's and blobs' bytes for memory.
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { utf8Length } from "../stores/bytes.js";
import type { Stores } from "../stores/types.js";

export interface DiskUsage {
  /** Sum of file sizes (`du -b --apparent-size`). */
  apparent: number;
  /** Allocated blocks (`du -B1`): what the disk actually gives up. */
  allocated: number;
  files: number;
}

/** `du` of a directory tree; `exclude` names top-level entries to leave out. */
export async function diskUsage(dir: string, exclude: string[] = []): Promise<DiskUsage> {
  const usage: DiskUsage = { apparent: 0, allocated: 0, files: 0 };
  const walk = async (path: string, top: boolean): Promise<void> => {
    let entries;
    try {
      entries = await readdir(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (top && exclude.includes(entry.name)) continue;
      const child = join(path, entry.name);
      const info = await lstat(child);
      usage.allocated += info.blocks * 512;
      if (entry.isDirectory()) await walk(child, false);
      else {
        usage.apparent += info.size;
        usage.files++;
      }
    }
  };
  await walk(dir, true);
  return usage;
}

/** UTF-8 bytes of a value's JSON text, counting typed arrays and ArrayBuffers by their byte length. */
export function jsonBytes(value: unknown): number {
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (value instanceof ArrayBuffer) return value.byteLength;
  if (Array.isArray(value))
    return 2 + Math.max(0, value.length - 1) + value.reduce((n: number, v) => n + jsonBytes(v), 0);
  if (value && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== "function");
    return (
      2 +
      Math.max(0, entries.length - 1) +
      entries.reduce((n, [k, v]) => n + utf8Length(JSON.stringify(k)) + 1 + jsonBytes(v), 0)
    );
  }
  return utf8Length(JSON.stringify(value) ?? "null");
}

/** JSON bytes per object store of an IndexedDB database (opened read-only through `factory`). */
export async function indexedDbBytes(factory: IDBFactory, name: string): Promise<Record<string, number>> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const request = factory.open(name);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  try {
    const sizes: Record<string, number> = {};
    for (const storeName of [...db.objectStoreNames]) {
      sizes[storeName] = await new Promise<number>((resolve, reject) => {
        let total = 0;
        const cursor = db.transaction(storeName, "readonly").objectStore(storeName).openCursor();
        cursor.onsuccess = () => {
          const c = cursor.result;
          if (!c) return resolve(total);
          total += jsonBytes(c.value);
          c.continue();
        };
        cursor.onerror = () => reject(cursor.error);
      });
    }
    return sizes;
  } finally {
    db.close();
  }
}

/** Bytes of the blobs a content store holds (from its streamed listing). */
export async function contentBytes(stores: Stores): Promise<{ blobs: number; bytes: number }> {
  let blobs = 0;
  let total = 0;
  for await (const info of stores.content.list()) {
    blobs++;
    total += info.size;
  }
  return { blobs, bytes: total };
}

/** JSON bytes of the stored snapshot's state (what a resume starts from), 0 when there is none. */
export async function snapshotBytes(stores: Stores, executionId: string): Promise<{ seq: number; bytes: number }> {
  const snapshot = await stores.events.getSnapshot(executionId);
  return snapshot ? { seq: snapshot.seq, bytes: utf8Length(JSON.stringify(snapshot.state)) } : { seq: 0, bytes: 0 };
}
