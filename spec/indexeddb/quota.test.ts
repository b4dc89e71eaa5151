// A full disk surfaces as StorageQuotaError and leaves nothing half-written: the failing
// transaction is aborted, so the log, catalogue, archives and blobs are exactly as before.
import { afterEach, describe, expect, it, vi } from "vitest";
import { isQuotaExceeded } from "../../adapters/indexeddb/index.js";
import { contentAddress, utf8 } from "../../stores/bytes.js";
import { StorageQuotaError } from "../../stores/errors.js";
import { openFresh, started, step } from "./helpers.js";

const quota = () => new DOMException("The quota has been exceeded.", "QuotaExceededError");

type StoreMethod = "add" | "put";
/** Makes `method` on object store `storeName` fail like a full disk, synchronously or at commit. */
function failWrites(storeName: string, method: StoreMethod, how: "throws" | "aborts-transaction", afterCalls = 0) {
  const original = IDBObjectStore.prototype[method];
  let calls = 0;
  return vi.spyOn(IDBObjectStore.prototype, method).mockImplementation(function (
    this: IDBObjectStore,
    ...args: [unknown, IDBValidKey?]
  ) {
    if (this.name !== storeName || calls++ < afterCalls) return original.apply(this, args);
    if (how === "throws") throw quota();
    // What Chromium does when the disk fills at commit: the write is accepted, then the whole
    // transaction aborts with its `error` set to QuotaExceededError and requests fail with AbortError.
    const request = original.apply(this, args);
    const tx = this.transaction;
    tx.abort();
    Object.defineProperty(tx, "error", { value: quota(), configurable: true });
    return request;
  });
}

afterEach(() => vi.restoreAllMocks());

describe("IndexedDB quota failures", () => {
  for (const how of ["throws", "aborts-transaction"] as const) {
    it(`an append whose write ${how} rejects with StorageQuotaError and writes nothing`, async () => {
      const { stores } = await openFresh();
      const { events } = stores;
      await events.append("e1", 0, [started(1, "s"), step(2)]);
      const before = { log: await events.read("e1"), info: await events.getExecution("e1") };

      failWrites("records", "add", how, 1);
      const error = await events.append("e1", 2, [step(3), step(4), step(5)]).catch((e: unknown) => e);
      vi.restoreAllMocks();

      expect(error).toBeInstanceOf(StorageQuotaError);
      expect(error).toMatchObject({ code: "LOOM_STORAGE_QUOTA" });
      expect((error as Error).message).toContain('execution "e1"');
      expect(isQuotaExceeded((error as Error).cause)).toBe(true);
      expect(await events.read("e1")).toEqual(before.log);
      expect(await events.getExecution("e1")).toEqual(before.info);
      expect(await events.head("e1")).toBe(2);
      // The failure left the store usable: the same append succeeds once there is room.
      await events.append("e1", 2, [step(3)]);
      expect(await events.head("e1")).toBe(3);
      await stores.close();
    });
  }

  it("a failed archive keeps the records live and adds no segment", async () => {
    const { stores } = await openFresh();
    await stores.events.append("e1", 0, [started(1), step(2), step(3)]);
    failWrites("archives", "add", "aborts-transaction");
    await expect(stores.events.archive("e1", 2)).rejects.toBeInstanceOf(StorageQuotaError);
    vi.restoreAllMocks();
    expect((await stores.events.read("e1")).map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(await stores.events.readArchives("e1")).toEqual([]);
    await stores.close();
  });

  it("a blob that does not fit leaves neither bytes nor metadata", async () => {
    const { stores } = await openFresh();
    const kept = await stores.content.put(utf8("kept"));
    // The bytes are written first, then the metadata fails: the bytes must go with it.
    failWrites("blobMeta", "put", "throws");
    await expect(stores.content.put(utf8("too big"))).rejects.toBeInstanceOf(StorageQuotaError);
    vi.restoreAllMocks();
    const refused = await contentAddress(utf8("too big"));
    expect(await stores.content.get(refused)).toBeUndefined();
    expect(await stores.content.has(refused)).toBe(false);
    const listed = [];
    for await (const info of stores.content.list()) listed.push(info.address);
    expect(listed).toEqual([kept]);
    await stores.close();
  });

  it("recognises quota failures however they are wrapped", () => {
    expect(isQuotaExceeded(quota())).toBe(true);
    expect(isQuotaExceeded(new DOMException("aborted", "AbortError"))).toBe(false);
    expect(isQuotaExceeded(Object.assign(new Error("aborted"), { name: "AbortError", cause: quota() }))).toBe(true);
    // Dexie's AbortError keeps the transaction's error as `inner`.
    expect(isQuotaExceeded(Object.assign(new Error("aborted"), { name: "AbortError", inner: quota() }))).toBe(true);
    expect(isQuotaExceeded(new Error("disk on fire"))).toBe(false);
  });

  it("a record IndexedDB cannot store is refused by seq, with nothing written", async () => {
    const { stores } = await openFresh();
    await stores.events.append("e1", 0, [started(1)]);
    const bad = { ...step(3), output: () => 1 };
    const error = await stores.events.append("e1", 1, [step(2), bad]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/record seq 3 .*plain JSON/);
    expect(await stores.events.head("e1")).toBe(1);
    expect((await stores.events.read("e1")).map((r) => r.seq)).toEqual([1]);
    await stores.close();
  });
});
