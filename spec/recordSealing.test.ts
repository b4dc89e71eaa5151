import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { fromBase64, toBase64 } from "../stores/bytes.js";
import { LoomworkError } from "../stores/errors.js";
import {
  RecordAuthenticationError,
  forgetRecordKeys,
  importRecordKey,
  isSealed,
  openRecord,
  recordIv,
  sealRecord,
  type SealedJournalRecord,
} from "../stores/recordSealing.js";
import { EVENT_RECEIVED, STEP_COMPLETED, TRANSITION } from "../stores/schema.js";
import type { StoredRecord } from "../stores/types.js";

const newKey = () => crypto.getRandomValues(new Uint8Array(32));
// Records are JSON: what a store gives back is the JSON round trip (e.g. -0 comes back as 0).
const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const step = (seq: number, output: unknown): StoredRecord => ({
  seq,
  at: 1_700_000_000_000 + seq,
  type: STEP_COMPLETED,
  stepId: `loop#turn:${seq}:tool:0`,
  effectId: "search",
  output,
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("sealRecord / openRecord", () => {
  it("round-trips any JSON payload, also through a JSON store", async () => {
    const key = newKey();
    const readable = fc.record(
      { stepId: fc.string(), effectId: fc.string(), timerId: fc.string(), from: fc.jsonValue(), to: fc.jsonValue() },
      { requiredKeys: [] },
    );
    const extra = fc.dictionary(
      fc
        .string()
        .filter((k) => !["seq", "at", "type", "sealed", "stepId", "effectId", "timerId", "from", "to"].includes(k)),
      fc.jsonValue(),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue(),
        readable,
        extra,
        fc.integer({ min: 1 }),
        fc.option(fc.array(fc.string()), { nil: undefined }),
        async (output, fields, others, seq, cited) => {
          const record = asJson({ ...others, ...fields, seq, at: 1_000, type: STEP_COMPLETED, output } as StoredRecord);
          const sealed = await sealRecord(record, key, "exec-1", cited);
          expect(isSealed(sealed)).toBe(true);
          expect(await openRecord(sealed, key, "exec-1")).toEqual(record);
          expect(await openRecord(asJson(sealed), key, "exec-1")).toEqual(record);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps seq, at, type, the ids and refs readable and seals the rest", async () => {
    const key = newKey();
    const record: StoredRecord = {
      ...step(7, { text: "CANARY-7f3a secret tool output" }),
      inputDigest: "d1",
      refs: ["own-field"],
    };
    const sealed = (await sealRecord(record, key, "exec-1", [
      "sha256:aa",
      "sha256:bb",
      "sha256:aa",
    ])) as SealedJournalRecord;
    expect(Object.keys(sealed).sort()).toEqual(["at", "effectId", "refs", "sealed", "seq", "stepId", "type"]);
    expect(sealed).toMatchObject({
      seq: 7,
      at: record.at,
      type: STEP_COMPLETED,
      stepId: record.stepId,
      effectId: "search",
    });
    expect(sealed.refs).toEqual(["sha256:aa", "sha256:bb"]);
    expect(JSON.stringify(sealed)).not.toContain("CANARY");
    // The record's own `refs` is payload; the readable `refs` is only the caller's annotation.
    expect(await openRecord(sealed, key, "exec-1")).toEqual(record);

    const transition: StoredRecord = { seq: 8, at: 9, type: TRANSITION, from: { a: "b" }, to: "done", event: "NEXT" };
    const sealedTransition = await sealRecord(transition, key, "exec-1");
    expect(sealedTransition).toMatchObject({ from: { a: "b" }, to: "done" });
    expect(sealedTransition).not.toHaveProperty("refs");
    expect(sealedTransition).not.toHaveProperty("event");
    const timer: StoredRecord = { seq: 9, at: 10, type: EVENT_RECEIVED, timerId: "t1", event: { type: "TICK" } };
    expect(await sealRecord(timer, key, "exec-1", [])).toMatchObject({ timerId: "t1", refs: [] });
  });

  it("keeps a JSON field named __proto__ as data", async () => {
    const key = newKey();
    const record = JSON.parse(
      `{"seq":1,"at":2,"type":"${STEP_COMPLETED}","__proto__":{"polluted":true},"output":1}`,
    ) as StoredRecord;
    const opened = await openRecord(await sealRecord(record, key, "e"), key, "e");
    expect(Object.getPrototypeOf(opened)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(opened, "__proto__")?.value).toEqual({ polluted: true });
    expect(opened).toEqual(record);
  });

  it("passes an unsealed record through unchanged", async () => {
    const record = step(1, { ok: true });
    expect(isSealed(record)).toBe(false);
    expect(await openRecord(record, newKey(), "exec-1")).toBe(record);
  });

  it("fails authentication when two records' ciphertexts are swapped", async () => {
    const key = newKey();
    const first = (await sealRecord(step(1, "one"), key, "exec-1")) as SealedJournalRecord;
    const second = (await sealRecord(step(2, "two"), key, "exec-1")) as SealedJournalRecord;
    const error = await rejection(openRecord({ ...first, sealed: second.sealed }, key, "exec-1"));
    expect(error).toBeInstanceOf(RecordAuthenticationError);
    expect(error).toBeInstanceOf(LoomworkError);
    expect(error).toMatchObject({ executionId: "exec-1", seq: 1, code: "LOOM_RECORD_AUTHENTICATION" });
    await expect(openRecord({ ...second, sealed: first.sealed }, key, "exec-1")).rejects.toMatchObject({ seq: 2 });
    // Moving a whole record to another seq or execution fails too.
    await expect(openRecord({ ...first, seq: 2 }, key, "exec-1")).rejects.toBeInstanceOf(RecordAuthenticationError);
    await expect(openRecord(first, key, "exec-2")).rejects.toMatchObject({ executionId: "exec-2", seq: 1 });
  });

  it("fails authentication when any one bit of the sealed bytes is flipped", async () => {
    const key = newKey();
    const sealed = (await sealRecord(step(3, { text: "hello" }), key, "exec-1")) as SealedJournalRecord;
    const bits = fromBase64(sealed.sealed).byteLength * 8;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: bits - 1 }), async (bit) => {
        const bytes = fromBase64(sealed.sealed);
        bytes[bit >> 3]! ^= 1 << (bit & 7);
        await expect(openRecord({ ...sealed, sealed: toBase64(bytes) }, key, "exec-1")).rejects.toBeInstanceOf(
          RecordAuthenticationError,
        );
      }),
      { numRuns: 200 },
    );
  });

  it("fails authentication when a readable field, the key or the framing is wrong", async () => {
    const key = newKey();
    const sealed = (await sealRecord(step(4, "x"), key, "exec-1", ["sha256:aa"])) as SealedJournalRecord;
    for (const altered of [
      { ...sealed, stepId: "loop#turn:9:tool:0" },
      { ...sealed, refs: [] },
      { ...sealed, at: sealed.at + 1 },
      { ...sealed, type: EVENT_RECEIVED },
      { ...sealed, output: "a field slipped in beside the seal" },
      { ...sealed, sealed: "%%%" },
      { ...sealed, sealed: toBase64(new Uint8Array(20)) },
    ]) {
      await expect(openRecord(altered, key, "exec-1")).rejects.toBeInstanceOf(RecordAuthenticationError);
    }
    await expect(openRecord(sealed, newKey(), "exec-1")).rejects.toBeInstanceOf(RecordAuthenticationError);
  });

  it("accepts the raw key and importRecordKey(raw) interchangeably, and refuses wrong keys as TypeError", async () => {
    const raw = newKey();
    const record = step(5, [1, "two", { three: null }]);
    const imported = await importRecordKey(raw);
    expect(await openRecord(await sealRecord(record, imported, "e"), raw.slice(), "e")).toEqual(record);
    expect(await openRecord(await sealRecord(record, raw, "e"), imported, "e")).toEqual(record);
    await expect(sealRecord(record, new Uint8Array(16), "e")).rejects.toThrow(/32 bytes/);
    const hmac = await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    await expect(sealRecord(record, hmac, "e")).rejects.toThrow(/AES-GCM CryptoKey/);
    await expect(sealRecord(record, raw, "")).rejects.toThrow(TypeError);
    await expect(sealRecord(await sealRecord(record, raw, "e"), raw, "e")).rejects.toThrow(/already sealed/);
  });

  it("imports a subject key once for many records, even from fresh copies of it", async () => {
    forgetRecordKeys();
    const raw = newKey();
    const importKey = vi.spyOn(crypto.subtle, "importKey");
    const sealed = await Promise.all(
      Array.from({ length: 2_000 }, (_, i) => sealRecord(step(i + 1, i), raw.slice(), "e")),
    );
    expect(importKey).toHaveBeenCalledTimes(1);
    expect(await openRecord(sealed[1_999]!, raw.slice(), "e")).toEqual(step(2_000, 1_999));
    expect(importKey).toHaveBeenCalledTimes(1);
    forgetRecordKeys();
    await sealRecord(step(1, 0), raw, "e");
    expect(importKey).toHaveBeenCalledTimes(2);
  });

  it("seals the same record to a fresh IV and ciphertext each time", async () => {
    const key = newKey();
    const a = (await sealRecord(step(1, "same"), key, "e")) as SealedJournalRecord;
    const b = (await sealRecord(step(1, "same"), key, "e")) as SealedJournalRecord;
    expect(fromBase64(a.sealed).subarray(0, 12)).not.toEqual(fromBase64(b.sealed).subarray(0, 12));
    expect(a.sealed).not.toBe(b.sealed);
  });

  it("draws 2^20 IVs under one key without a repeat", () => {
    const count = 2 ** 20;
    const seen = new Set<string>();
    let wrongLength = 0;
    for (let i = 0; i < count; i++) {
      const iv = recordIv();
      if (iv.byteLength !== 12) wrongLength++;
      seen.add(String.fromCharCode(...iv));
    }
    expect(wrongLength).toBe(0);
    expect(seen.size).toBe(count);
  });
});
