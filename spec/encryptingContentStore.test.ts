import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contentAddress, utf8 } from "../stores/bytes.js";
import { ContentAuthenticationError, EncryptingContentStore } from "../stores/encryptingContentStore.js";
import { LoomworkError, SubjectErasedError } from "../stores/errors.js";
import { MemoryContentStore, MemoryKeyStore } from "../stores/memory.js";
import { CONTENT_STORE_SPI_VERSION, type ContentInfo, type ContentStore } from "../stores/types.js";

/** A plain store with only the required methods and its blobs in the open, to tamper with. */
class BareContentStore implements ContentStore {
  readonly spiVersion = "1.0.0";
  readonly sealsContent = false;
  readonly blobs = new Map<string, Uint8Array>();
  async put(bytes: Uint8Array): Promise<string> {
    const address = await contentAddress(bytes);
    this.blobs.set(address, bytes.slice());
    return address;
  }
  async get(address: string): Promise<Uint8Array | undefined> {
    return this.blobs.get(address)?.slice();
  }
  async has(address: string): Promise<boolean> {
    return this.blobs.has(address);
  }
  async *list(): AsyncIterable<ContentInfo> {
    for (const [address, bytes] of this.blobs) yield { address, size: bytes.byteLength, touchedAt: 0 };
  }
}

function setup() {
  const inner = new MemoryContentStore();
  const keys = new MemoryKeyStore();
  return { inner, keys, store: new EncryptingContentStore(inner, keys) };
}

async function innerBlobs(inner: ContentStore): Promise<Uint8Array[]> {
  const blobs: Uint8Array[] = [];
  for await (const { address } of inner.list()) blobs.push((await inner.get(address))!);
  return blobs;
}

function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

const text = (bytes: Uint8Array | undefined) => bytes && new TextDecoder().decode(bytes);

describe("EncryptingContentStore", () => {
  it("declares a sealing store of the current SPI", () => {
    const { store } = setup();
    expect(store.sealsContent).toBe(true);
    expect(store.spiVersion).toBe(CONTENT_STORE_SPI_VERSION);
  });

  it("requires a subject on put and get, naming the option", async () => {
    const { store } = setup();
    await expect(store.put(utf8("x"))).rejects.toThrow(TypeError);
    await expect(store.put(utf8("x"), {})).rejects.toThrow(/options\.subject/);
    await expect(store.put(utf8("x"), { subject: "" })).rejects.toThrow(/options\.subject/);
    const address = await store.put(utf8("x"), { subject: "alice" });
    await expect(store.get(address)).rejects.toThrow(/EncryptingContentStore\.get needs options\.subject/);
  });

  it("round-trips any bytes for any subject", async () => {
    const { store } = setup();
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), fc.string({ minLength: 1 }), async (bytes, subject) => {
        const address = await store.put(bytes, { subject });
        expect(address).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(await store.get(address, { subject })).toEqual(bytes);
      }),
      { numRuns: 100 },
    );
  });

  it("gives equal blobs of two subjects different addresses and ciphertexts", async () => {
    const { inner, store } = setup();
    const bytes = utf8("the same tool output");
    const a = await store.put(bytes, { subject: "alice" });
    const b = await store.put(bytes, { subject: "bob" });
    expect(a).not.toBe(b);
    expect(a).not.toBe(await contentAddress(bytes));
    expect(await inner.get(a)).not.toEqual(await inner.get(b));
    expect(text(await store.get(a, { subject: "alice" }))).toBe("the same tool output");
    expect(text(await store.get(b, { subject: "bob" }))).toBe("the same tool output");
  });

  it("dedupes equal blobs of one subject: same address, one identical ciphertext, across instances", async () => {
    const { inner, keys, store } = setup();
    const a1 = await store.put(utf8("report"), { subject: "alice" });
    const a2 = await store.put(utf8("report"), { subject: "alice" });
    // A fresh instance (a new process over the same stores) seals to the same blob.
    const a3 = await new EncryptingContentStore(inner, keys).put(utf8("report"), { subject: "alice" });
    expect(a2).toBe(a1);
    expect(a3).toBe(a1);
    expect(await innerBlobs(inner)).toHaveLength(1);
  });

  it("never lets the plaintext reach the inner store", async () => {
    const { inner, store } = setup();
    const canary = utf8("CANARY-d41d8cd9-personal-data");
    for (const [i, subject] of ["alice", "bob", "carol"].entries()) {
      await store.put(canary, { subject });
      await store.put(utf8(`prefix ${"x".repeat(i * 1000)} ${new TextDecoder().decode(canary)} suffix`), { subject });
    }
    const blobs = await innerBlobs(inner);
    expect(blobs).toHaveLength(6);
    for (const blob of blobs) expect(contains(blob, canary)).toBe(false);
  });

  it("erases: after keys.destroy(subject) get resolves undefined and nothing recovers the canary", async () => {
    const { inner, keys, store } = setup();
    const canary = utf8("CANARY-erase-me");
    const address = await store.put(canary, { subject: "alice" });
    const other = await store.put(canary, { subject: "bob" });
    await keys.destroy("alice");
    expect(await store.get(address, { subject: "alice" })).toBeUndefined();
    await expect(store.put(canary, { subject: "alice" })).rejects.toBeInstanceOf(SubjectErasedError);
    // The sealed blob may linger until the conditional delete; it still yields nothing readable.
    expect(await inner.has(address)).toBe(true);
    await expect(store.get(address, { subject: "bob" })).rejects.toBeInstanceOf(ContentAuthenticationError);
    for (const blob of await innerBlobs(inner)) expect(contains(blob, canary)).toBe(false);
    expect(text(await store.get(other, { subject: "bob" }))).toBe("CANARY-erase-me");
  });

  it("resolves undefined for a missing blob", async () => {
    const { store } = setup();
    await store.put(utf8("key exists"), { subject: "alice" });
    expect(await store.get("sha256:" + "0".repeat(64), { subject: "alice" })).toBeUndefined();
    expect(await store.get("sha256:" + "0".repeat(64), { subject: "nobody" })).toBeUndefined();
  });

  it("rejects with ContentAuthenticationError for another subject, a tampered blob or a swapped blob", async () => {
    const inner = new BareContentStore();
    const store = new EncryptingContentStore(inner, new MemoryKeyStore());
    const a = await store.put(utf8("alice's notes"), { subject: "alice" });
    const b = await store.put(utf8("alice's other notes"), { subject: "alice" });
    await store.put(utf8("bob has a key"), { subject: "bob" });

    const wrongSubject = store.get(a, { subject: "bob" });
    await expect(wrongSubject).rejects.toBeInstanceOf(ContentAuthenticationError);
    await expect(wrongSubject).rejects.toBeInstanceOf(LoomworkError);
    await expect(wrongSubject).rejects.toMatchObject({
      address: a,
      subject: "bob",
      code: "LOOM_CONTENT_AUTHENTICATION",
    });
    await expect(store.get(a, { subject: "never-keyed" })).rejects.toBeInstanceOf(ContentAuthenticationError);

    const original = inner.blobs.get(a)!;
    inner.blobs.set(a, inner.blobs.get(b)!);
    await expect(store.get(a, { subject: "alice" })).rejects.toThrow(/hash differs from its address/);

    // A flipped bit under an address that matches (the inner store re-addressed the altered blob).
    const flipped = original.slice();
    flipped[flipped.length - 20]! ^= 0x01;
    const reAddressed = await contentAddress(flipped);
    inner.blobs.set(reAddressed, flipped);
    await expect(store.get(reAddressed, { subject: "alice" })).rejects.toThrow(/AES-GCM tag mismatch/);
    inner.blobs.set(reAddressed, flipped.subarray(0, 10));
    await expect(store.get(reAddressed, { subject: "alice" })).rejects.toBeInstanceOf(ContentAuthenticationError);
  });

  it("passes the optional methods through to the inner store", async () => {
    const { inner, store } = setup();
    const old = await store.put(utf8("old"), { subject: "alice" });
    const touched = await store.put(utf8("touched"), { subject: "alice" });
    expect(await store.has(old)).toBe(true);
    const listed: ContentInfo[] = [];
    for await (const info of store.list()) listed.push(info);
    expect(listed.map((info) => info.address).sort()).toEqual([old, touched].sort());

    const cutoff = await store.touchClock!();
    await store.put(utf8("touched"), { subject: "alice" });
    expect(await store.deleteIfUntouchedSince!(old, cutoff)).toBe(true);
    expect(await store.deleteIfUntouchedSince!(touched, cutoff)).toBe(false);
    expect(await inner.has(old)).toBe(false);
    expect(await store.delete!(touched)).toBe(true);
    expect(await store.has(touched)).toBe(false);
    expect(await store.get(touched, { subject: "alice" })).toBeUndefined();
  });

  it("has the optional methods only when the inner store has them", () => {
    const store = new EncryptingContentStore(new BareContentStore(), new MemoryKeyStore());
    for (const method of ["delete", "deleteIfUntouchedSince", "touchClock", "close"] as const) {
      expect(store[method]).toBeUndefined();
      expect(method in store).toBe(false);
    }
    const full = setup().store;
    expect(typeof full.delete).toBe("function");
    expect(typeof full.deleteIfUntouchedSince).toBe("function");
    expect(typeof full.touchClock).toBe("function");
    expect(full.close).toBeUndefined(); // MemoryContentStore has no close
  });

  it("closes the inner store when it can be closed", async () => {
    let closed = 0;
    const inner = Object.assign(new BareContentStore(), { close: async () => void closed++ });
    await new EncryptingContentStore(inner, new MemoryKeyStore()).close!();
    expect(closed).toBe(1);
  });
});
