// Optional compression at rest (stores/compression.ts, applied by the fs adapter): one format both the
// browser codec (CompressionStream) and node:zlib read; plain and compressed data mixed in one directory.
import { randomBytes } from "node:crypto";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { plainPayload, scanFrames, smaller } from "../../adapters/fs/framing.js";
import { ExecutionPaths } from "../../adapters/fs/journalFiles.js";
import {
  COMPRESSED_MAGIC,
  compressBytes,
  decompressBytes,
  isCompressed,
  maybeCompress,
} from "../../stores/compression.js";
import { JournalCorruptionError } from "../../stores/errors.js";
import type { StoredRecord } from "../../stores/types.js";
import { removeTempDirs, started, step, tempDir } from "./helpers.js";

afterAll(removeTempDirs);

const text = (n: number) => `turn ${n}: ` + "the model said something fairly repetitive about the weather. ".repeat(8);
const record = (seq: number): StoredRecord => (seq === 1 ? started(1) : step(seq, { n: seq, text: text(seq) }));
const records = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => record(from + i));

async function fill(dir: string, compression: "deflate" | "none", from = 1, to = 40): Promise<string> {
  const stores = await fsStores({ dir, compression });
  for (let seq = from; seq <= to; seq++) await stores.events.append("e", seq - 1, [record(seq)]);
  await stores.events.putSnapshot("e", {
    seq: to - 5,
    at: 0,
    state: { transcript: records(1, to - 5).map((r) => JSON.stringify(r)) },
  });
  const address = await stores.content.put(new TextEncoder().encode(text(0).repeat(20)));
  await stores.close();
  return address;
}

describe("compression codec", () => {
  it("CompressionStream's output and node:zlib's are one format: each reads the other's", async () => {
    for (const size of [1, 100, 5_000, 200_000]) {
      const plain = new TextEncoder().encode(text(size).repeat(Math.ceil(size / 500))).subarray(0, size);
      const browser = await compressBytes(plain);
      expect(isCompressed(browser)).toBe(true);
      expect(Buffer.from(plainPayload(browser)).equals(Buffer.from(plain))).toBe(true);
      const node = Buffer.concat([COMPRESSED_MAGIC, (await import("node:zlib")).deflateSync(plain)]);
      expect(Buffer.from(await decompressBytes(node)).equals(Buffer.from(plain))).toBe(true);
    }
  });

  it("keeps a value plain when compressing would not make it smaller", async () => {
    const random = new Uint8Array(randomBytes(300));
    expect(await maybeCompress(random, "deflate")).toBe(random);
    expect(smaller(random)).toBe(random);
    expect(await maybeCompress(random, "none")).toBe(random);
  });

  it("rejects a damaged compressed stream", async () => {
    const packed = await compressBytes(new TextEncoder().encode(text(1)));
    packed[packed.length - 2] = packed[packed.length - 2]! ^ 0xff;
    await expect(decompressBytes(packed)).rejects.toThrow();
  });

  it("refuses an unknown option value", async () => {
    await expect(fsStores({ dir: await tempDir("bad-option"), compression: "zstd" as "deflate" })).rejects.toThrow(
      RangeError,
    );
  });
});

describe("fs compression at rest", () => {
  it("is off by default; with deflate, logs, snapshots and blobs are smaller and read back the same", async () => {
    const [plainDir, packedDir] = [await tempDir("plain"), await tempDir("packed")];
    const address = await fill(plainDir, "none");
    expect(await fill(packedDir, "deflate")).toBe(address);
    const paths = (dir: string) => ExecutionPaths.of(dir, "e");
    for (const file of ["log", "snapshot"] as const) {
      const [plain, packed] = [(await stat(paths(plainDir)[file])).size, (await stat(paths(packedDir)[file])).size];
      expect(packed).toBeLessThan(plain / 2);
    }
    const hex = address.slice("sha256:".length);
    const blob = (dir: string) => join(dir, "content", "blobs", hex.slice(0, 2), hex.slice(2, 4), hex);
    expect(isCompressed(await readFile(blob(packedDir)))).toBe(true);
    expect(isCompressed(await readFile(blob(plainDir)))).toBe(false);
    expect((await stat(blob(packedDir))).size).toBeLessThan((await stat(blob(plainDir))).size / 4);
    // The header stays plain; every batch frame is compressed.
    const frames = scanFrames(await readFile(paths(packedDir).log)).frames;
    expect(frames).toHaveLength(41);
    const plainStores = await fsStores({ dir: plainDir });
    const packedStores = await fsStores({ dir: packedDir });
    expect(await packedStores.events.read("e")).toEqual(await plainStores.events.read("e"));
    expect(await packedStores.events.getSnapshot("e")).toEqual(await plainStores.events.getSnapshot("e"));
    expect(await packedStores.events.read("e", 36)).toEqual(records(36, 40));
    expect(await packedStores.content.get(address)).toEqual(await plainStores.content.get(address));
    await plainStores.close();
    await packedStores.close();
  });

  it("a directory mixing compressed and plain frames, snapshots and blobs reads fine, whichever option opens it", async () => {
    const dir = await tempDir("mixed");
    await fill(dir, "none", 1, 20);
    await fill(dir, "deflate", 21, 40);
    const stores = await fsStores({ dir });
    await stores.events.append("e", 40, [record(41)]);
    const plainBlob = await stores.content.put(Uint8Array.of(...COMPRESSED_MAGIC, 1, 2, 3)); // plain bytes that look compressed
    await stores.close();
    const bytes = await readFile(ExecutionPaths.of(dir, "e").log);
    const frames = scanFrames(bytes).frames;
    expect(frames).toHaveLength(42);
    const packed = frames.map((f) => isCompressed(bytes.subarray(f.offset + 8, f.end)));
    // Header plain, seqs 1-20 plain, 21-40 compressed, 41 plain again.
    expect(packed).toEqual([false, ...Array<boolean>(20).fill(false), ...Array<boolean>(20).fill(true), false]);
    for (const compression of ["none", "deflate"] as const) {
      const reopened = await fsStores({ dir, compression });
      expect(await reopened.events.read("e")).toEqual(records(1, 41));
      expect((await reopened.events.getSnapshot("e"))?.seq).toBe(35);
      expect(await reopened.events.read("e", 36)).toEqual(records(36, 41));
      expect(await reopened.content.get(plainBlob)).toEqual(Uint8Array.of(...COMPRESSED_MAGIC, 1, 2, 3));
      await reopened.close();
    }
  });

  it("truncates a torn compressed tail; reports a damaged compressed frame with compressed frames after it", async () => {
    const dir = await tempDir("torn-packed");
    await fill(dir, "deflate", 1, 40);
    const log = ExecutionPaths.of(dir, "e").log;
    const whole = await readFile(log);
    const frames = scanFrames(whole).frames;
    // A torn append past the durable size: half of a compressed frame.
    const extra = Buffer.from(whole.subarray(frames[40]!.offset, frames[40]!.end));
    await writeFile(log, Buffer.concat([whole, extra.subarray(0, extra.length >> 1)]));
    let stores = await fsStores({ dir });
    expect(await stores.events.read("e")).toEqual(records(1, 40));
    await stores.close();
    expect((await stat(log)).size).toBe(whole.length);
    // A flipped byte inside frame 10 (acknowledged): damage, not a torn tail, though every frame after it is compressed.
    const damaged = Buffer.from(whole);
    const at = frames[10]!.offset + 14;
    damaged[at] = damaged[at]! ^ 0x10;
    await writeFile(log, damaged);
    await writeFile(join(dir, "catalogue.ckpt"), Buffer.alloc(0)).catch(() => undefined);
    stores = await fsStores({ dir });
    await expect(stores.events.read("e")).rejects.toBeInstanceOf(JournalCorruptionError);
    expect((await stores.events.getExecution("e"))?.damaged?.offset).toBe(frames[10]!.offset);
    await stores.close();
    expect((await stat(log)).size).toBe(whole.length);
  });
});
