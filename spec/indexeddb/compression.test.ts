// Compression at rest on IndexedDB: snapshots and blobs, in the one format of stores/compression.ts;
// a database mixing plain and compressed values reads fine whichever option opens it.
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { describe, expect, it } from "vitest";
import { indexedDbStores } from "../../adapters/indexeddb/index.js";
import { COMPRESSED_MAGIC, isCompressed } from "../../stores/compression.js";
import { started, step } from "../conformance/suite.js";

const state = (n: number) => ({
  transcript: Array.from({ length: 40 }, (_, i) => `message ${i} of snapshot ${n}: the same words again and again`),
});
const text = new TextEncoder().encode("a blob of repetitive tool output. ".repeat(200));

async function raw(factory: IDBFactory, store: string, key: string): Promise<unknown> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const request = factory.open("c");
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  try {
    return await new Promise((resolve, reject) => {
      const request = db.transaction(store, "readonly").objectStore(store).get(key);
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  } finally {
    db.close();
  }
}

describe("IndexedDB compression at rest", () => {
  it("stores snapshots and blobs compressed with deflate, reads them back equal, and mixes with plain ones", async () => {
    const factory = new IDBFactory();
    const open = (compression: "deflate" | "none") =>
      indexedDbStores({ name: "c", indexedDB: factory, IDBKeyRange, locks: null, compression });
    let stores = await open("none");
    await stores.events.append("plain", 0, [started(1), step(2)]);
    await stores.events.putSnapshot("plain", { seq: 2, at: 0, state: state(1) });
    const plainBlob = await stores.content.put(Uint8Array.of(...COMPRESSED_MAGIC, 9, 9)); // plain bytes that look compressed
    await stores.close();

    stores = await open("deflate");
    await stores.events.append("packed", 0, [started(1), step(2)]);
    await stores.events.putSnapshot("packed", { seq: 2, at: 0, state: state(2) });
    const packedBlob = await stores.content.put(text);
    await stores.close();

    // Schema version 2 keeps a snapshot's state as its JSON text, packed when compressed (spec/indexeddb/snapshotRows.test.ts).
    const packedSnapshot = (await raw(factory, "snapshots", "packed")) as { text: unknown };
    expect(packedSnapshot.text instanceof Uint8Array && isCompressed(packedSnapshot.text)).toBe(true);
    expect(((await raw(factory, "snapshots", "plain")) as { text: unknown }).text).toBe(JSON.stringify(state(1)));
    const storedBlob = (await raw(factory, "blobBytes", packedBlob)) as Uint8Array;
    expect(isCompressed(storedBlob)).toBe(true);
    expect(storedBlob.byteLength).toBeLessThan(text.byteLength / 10);

    for (const compression of ["none", "deflate"] as const) {
      stores = await open(compression);
      expect(await stores.events.getSnapshot("packed")).toEqual({ seq: 2, at: 0, state: state(2) });
      expect(await stores.events.getSnapshot("plain")).toEqual({ seq: 2, at: 0, state: state(1) });
      expect(await stores.content.get(packedBlob)).toEqual(text);
      expect(await stores.content.get(plainBlob)).toEqual(Uint8Array.of(...COMPRESSED_MAGIC, 9, 9));
      const listed = [];
      for await (const info of stores.content.list()) listed.push(info);
      expect(listed.find((i) => i.address === packedBlob)?.size).toBe(text.byteLength);
      await stores.close();
    }
  });
});
