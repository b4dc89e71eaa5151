// Campaign 8: crypto. 2^20 record IVs under one key with no repeat (and real seals: every sealed record
// carries its own IV); swapping two records' ciphertexts, moving one, or flipping any one bit fails
// authentication; equal blobs of two subjects get different addresses and ciphertexts; a sealed
// journal on disk holds no plaintext, and a tampered one refuses to resume with a typed error.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { fsStores } from "../../adapters/fs/index.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { fromBase64, toBase64 } from "../../stores/bytes.js";
import { ContentAuthenticationError, EncryptingContentStore } from "../../stores/encryptingContentStore.js";
import { LoomworkError } from "../../stores/errors.js";
import { MemoryContentStore, MemoryKeyStore, memoryStores } from "../../stores/memory.js";
import { openRecord, recordIv, RecordAuthenticationError, sealRecord } from "../../stores/recordSealing.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import type { ContentInfo, ContentStore, StoredRecord } from "../../stores/types.js";
import { cases, removeTempDirs, tempDir, timeout } from "./support.js";

afterAll(removeTempDirs);

const IV_BYTES = 12;
const runs = (ci: number, soak: number) => ({ numRuns: cases("PROPERTY_RUNS", ci, soak) });
const KEY = new Uint8Array(32).map((_, i) => (i * 37 + 11) & 0xff);
const OTHER_KEY = new Uint8Array(32).map((_, i) => (i * 53 + 7) & 0xff);

/** Counts repeated 96-bit values among `count` drawn by `draw`, without holding a million strings. */
function repeats(count: number, draw: (i: number) => Uint8Array): number {
  const all = new Uint8Array(count * IV_BYTES);
  const high = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const iv = draw(i);
    all.set(iv, i * IV_BYTES);
    // The first 48 bits as an exact double: sort on them, then compare whole IVs among equals.
    high[i] = iv[0]! * 2 ** 40 + iv[1]! * 2 ** 32 + iv[2]! * 2 ** 24 + iv[3]! * 2 ** 16 + iv[4]! * 2 ** 8 + iv[5]!;
  }
  const sorted = high.slice().sort();
  const collided = new Set<number>();
  for (let k = 1; k < count; k++) if (sorted[k] === sorted[k - 1]) collided.add(sorted[k]!);
  // Only IVs whose first 48 bits collide (about one pair in 500 at 2^20) are compared whole.
  const groups = new Map<number, number[]>();
  for (let i = 0; i < count && collided.size > 0; i++)
    if (collided.has(high[i]!)) groups.set(high[i]!, [...(groups.get(high[i]!) ?? []), i]);
  let repeated = 0;
  const ivAt = (i: number) => Buffer.from(all.subarray(i * IV_BYTES, (i + 1) * IV_BYTES)).toString("hex");
  for (const indices of groups.values()) repeated += indices.length - new Set(indices.map(ivAt)).size;
  return repeated;
}

const record = (seq: number, output: unknown = { text: `payload ${seq}` }): StoredRecord => ({
  seq,
  at: 1_000 + seq,
  type: STEP_COMPLETED,
  stepId: `agent#turn:${seq}:tool:0`,
  effectId: "search",
  output,
});

async function rejects(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe("record sealing", () => {
  it(
    "draws 2^20 record IVs under one key with no repeat",
    () => {
      const count = cases("IVS", 2 ** 20, 2 ** 24);
      expect(repeats(count, () => recordIv())).toBe(0);
      console.info(`[campaign 8] ${count} record IVs, no repeat`);
    },
    timeout(60_000, 1_800_000),
  );

  it(
    "gives every really sealed record of one key its own IV",
    async () => {
      const count = cases("SEALS", 2 ** 14, 2 ** 20);
      const sealed: string[] = new Array(count);
      const batch = 1_024;
      for (let from = 0; from < count; from += batch) {
        const done = await Promise.all(
          Array.from({ length: Math.min(batch, count - from) }, (_, i) =>
            sealRecord(record(from + i + 1), KEY, "exec").then((r) => r.sealed as string),
          ),
        );
        for (let i = 0; i < done.length; i++) sealed[from + i] = done[i]!;
      }
      expect(repeats(count, (i) => fromBase64(sealed[i]!).subarray(0, IV_BYTES))).toBe(0);
      console.info(`[campaign 8] ${count} records sealed under one key, each with its own IV`);
    },
    timeout(60_000, 3_600_000),
  );

  it(
    "refuses two records' ciphertexts swapped, a record moved to another seq or execution, or opened with another key",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.jsonValue({ maxDepth: 2 }),
          fc.jsonValue({ maxDepth: 2 }),
          fc.integer({ min: 1, max: 1_000 }),
          async (a, b, seq) => {
            const first = await sealRecord(record(seq, a), KEY, "exec");
            const second = await sealRecord(record(seq + 1, b), KEY, "exec");
            expect(await openRecord(first, KEY, "exec")).toEqual(JSON.parse(JSON.stringify(record(seq, a))));
            const swapped = [
              { ...first, sealed: second.sealed },
              { ...second, sealed: first.sealed },
            ];
            for (const r of swapped)
              expect(await rejects(openRecord(r, KEY, "exec"))).toBeInstanceOf(RecordAuthenticationError);
            expect(await rejects(openRecord({ ...first, seq: seq + 1 }, KEY, "exec"))).toBeInstanceOf(
              RecordAuthenticationError,
            );
            expect(await rejects(openRecord(first, KEY, "another-exec"))).toBeInstanceOf(RecordAuthenticationError);
            expect(await rejects(openRecord(first, OTHER_KEY, "exec"))).toBeInstanceOf(RecordAuthenticationError);
            expect(await rejects(openRecord({ ...first, stepId: "agent#turn:0:tool:1" }, KEY, "exec"))).toBeInstanceOf(
              RecordAuthenticationError,
            );
            expect(
              await rejects(openRecord({ ...first, refs: ["sha256:" + "0".repeat(64)] }, KEY, "exec")),
            ).toBeInstanceOf(RecordAuthenticationError);
          },
        ),
        runs(60, 5_000),
      );
    },
    timeout(60_000, 3_600_000),
  );

  it("refuses a sealed record with any single bit flipped, in the IV, the ciphertext or the tag", async () => {
    const sealed = await sealRecord(record(7, { text: "héllo ✓", n: [1, 2, 3] }), KEY, "exec", [
      "sha256:" + "a".repeat(64),
    ]);
    const bytes = fromBase64(sealed.sealed as string);
    let refused = 0;
    for (let bit = 0; bit < bytes.length * 8; bit++) {
      const flipped = bytes.slice();
      flipped[bit >> 3]! ^= 1 << (bit & 7);
      const error = await rejects(openRecord({ ...sealed, sealed: toBase64(flipped) }, KEY, "exec"));
      expect(error, `bit ${bit}`).toBeInstanceOf(RecordAuthenticationError);
      refused++;
    }
    expect(refused).toBe(bytes.length * 8);
    console.info(`[campaign 8] ${refused} single-bit flips of one sealed record, each refused`);
  });
});

/** A content store that serves whatever the test put at an address (to swap or damage blobs under a sealing store). */
class TamperableStore implements ContentStore {
  readonly spiVersion: string;
  readonly sealsContent = false;
  readonly blobs = new Map<string, Uint8Array>();
  constructor(private readonly inner = new MemoryContentStore()) {
    this.spiVersion = inner.spiVersion;
  }
  async put(bytes: Uint8Array): Promise<string> {
    const address = await this.inner.put(bytes);
    this.blobs.set(address, bytes.slice());
    return address;
  }
  async get(address: string): Promise<Uint8Array | undefined> {
    return this.blobs.get(address)?.slice();
  }
  has(address: string): Promise<boolean> {
    return Promise.resolve(this.blobs.has(address));
  }
  list(): AsyncIterable<ContentInfo> {
    return this.inner.list();
  }
}

describe("EncryptingContentStore", () => {
  it(
    "gives equal blobs of two subjects different addresses and ciphertexts, and never opens one with the other's key",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.uint8Array({ maxLength: 2_048 }),
          fc.string({ minLength: 1, maxLength: 8 }),
          async (bytes, suffix) => {
            const inner = new TamperableStore();
            const store = new EncryptingContentStore(inner, new MemoryKeyStore());
            const [a, b] = [`alice-${suffix}`, `bob-${suffix}`];
            const addressA = await store.put(bytes, { subject: a });
            const addressB = await store.put(bytes, { subject: b });
            expect(addressA).not.toBe(addressB);
            expect(
              Buffer.compare(Buffer.from(inner.blobs.get(addressA)!), Buffer.from(inner.blobs.get(addressB)!)),
            ).not.toBe(0);
            expect(await store.put(bytes, { subject: a }), "one subject's equal blobs dedupe").toBe(addressA);
            expect(Buffer.from((await store.get(addressA, { subject: a }))!)).toEqual(Buffer.from(bytes));
            expect(await rejects(store.get(addressA, { subject: b }))).toBeInstanceOf(ContentAuthenticationError);
            // Served under the other's address, or with one bit flipped: refused.
            const blobA = inner.blobs.get(addressA)!;
            inner.blobs.set(addressB, blobA);
            expect(await rejects(store.get(addressB, { subject: b }))).toBeInstanceOf(ContentAuthenticationError);
            const flipped = blobA.slice();
            flipped[flipped.length - 1]! ^= 0x01;
            inner.blobs.set(addressA, flipped);
            expect(await rejects(store.get(addressA, { subject: a }))).toBeInstanceOf(ContentAuthenticationError);
          },
        ),
        runs(80, 5_000),
      );
    },
    timeout(60_000, 3_600_000),
  );
});

describe("a sealed journal end to end (security.crypto on fs)", () => {
  const CANARY = "CANARY-alice-42";
  const loop = agentLoop$({ id: "sealed", model: "model", tools: ["fetch"], maxTurns: 3, warnTranscriptBytes: false });
  const effects = {
    model: createLlmEffect(
      scriptedModel([{ toolCalls: [{ toolName: "fetch", input: { who: "alice" } }] }, { text: `done for ${CANARY}` }]),
    ),
    fetch: createToolEffect(async () => ({
      secret: CANARY,
      rows: Array.from({ length: 60 }, (_, i) => `${CANARY} row ${i}`),
    })),
  };

  it("writes no plaintext to disk, resumes what it sealed, and refuses a swapped record with a typed error", async () => {
    const dir = await tempDir("sealed");
    const stores = await fsStores({ dir });
    const content = new EncryptingContentStore(stores.content, stores.keys);
    const config = () =>
      defineConfig({
        stores,
        effects,
        logics: [loop],
        security: { crypto: { keys: stores.keys } },
        execution: { snapshotEvery: 3, claimCheck: { store: content, toolIds: ["fetch"] } },
      });
    const app = createApp(config());
    await app.start(loop, { executionId: "s", subject: "alice", input: { prompt: `about ${CANARY}` } });
    const output = await app.result("s");
    await app.close();
    await stores.close();

    const files: string[] = [];
    const walk = async (d: string) => {
      for (const entry of await readdir(d, { withFileTypes: true })) {
        if (entry.isDirectory()) await walk(join(d, entry.name));
        else files.push(join(d, entry.name));
      }
    };
    await walk(dir);
    for (const file of files)
      expect((await readFile(file)).includes(Buffer.from("CANARY")), `${file} holds plaintext`).toBe(false);

    const reopened = await fsStores({ dir });
    const fresh = createApp(
      defineConfig({
        stores: reopened,
        effects,
        logics: [loop],
        security: { crypto: { keys: reopened.keys } },
        execution: {
          claimCheck: { store: new EncryptingContentStore(reopened.content, reopened.keys), toolIds: ["fetch"] },
        },
      }),
    );
    expect((await fresh.resume("s")).getSnapshot().status).toBe("done");
    expect(await fresh.result("s")).toEqual(output);
    await fresh.close();

    // The same records with two payloads swapped, in a store of their own: resume refuses, typed.
    const raw = await reopened.events.read("s");
    const steps = raw.filter((r) => r.type === STEP_COMPLETED);
    const tampered = raw.map((r) => ({ ...r }));
    const [i, j] = [raw.indexOf(steps[0]!), raw.indexOf(steps[1]!)];
    [tampered[i]!.sealed, tampered[j]!.sealed] = [raw[j]!.sealed, raw[i]!.sealed];
    const copy = { ...memoryStores(), keys: reopened.keys };
    await copy.events.append("s", 0, tampered);
    const other = createApp(
      defineConfig({ stores: copy, effects, logics: [loop], security: { crypto: { keys: reopened.keys } } }),
    );
    const error = await rejects(other.resume("s"));
    expect(error).toBeInstanceOf(LoomworkError);
    expect(error).toBeInstanceOf(RecordAuthenticationError);
    await other.close();
    await reopened.close();
  });
});
