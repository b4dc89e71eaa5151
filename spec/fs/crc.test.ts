// The frame checksum: node:zlib's native CRC-32 where the platform has it, the JavaScript one as the
// fallback; both give the same value, so files written by either (and by every earlier version) verify.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { crc32, crc32Js, encodeFrame, encodeJsonFrame, nativeCrc32, scanFrames } from "../../adapters/fs/framing.js";

// The checksum the JavaScript CRC-32 of earlier versions stored for the frame built in the last test.
const OLD_CHECKSUM = 0xff42a200;

describe("fs frame checksum", () => {
  it('is the standard CRC-32 (check value of "123456789")', () => {
    const check = new TextEncoder().encode("123456789");
    expect(crc32Js(check)).toBe(0xcbf43926);
    expect(crc32(check)).toBe(0xcbf43926);
  });

  it("uses node:zlib's native crc32 on this Node", () => {
    // Node 20.15+ and 22.2+ have it (the tests run on a Node 20 newer than 20.15); older ones take crc32Js.
    expect(nativeCrc32).toBeTypeOf("function");
  });

  it("native and JavaScript agree on random inputs, whole and chained", () => {
    for (let i = 0; i < 300; i++) {
      const length = i < 20 ? i : Math.floor(Math.random() * 5000);
      const bytes = new Uint8Array(randomBytes(length));
      const seed = i % 3 === 0 ? 0 : randomBytes(4).readUInt32LE(0);
      expect(crc32(bytes, seed)).toBe(crc32Js(bytes, seed));
      const cut = Math.floor(length / 3);
      expect(crc32(bytes.subarray(cut), crc32(bytes.subarray(0, cut)))).toBe(crc32Js(bytes));
    }
  });

  it("reads frames checksummed by the JavaScript CRC-32 (files of earlier versions)", () => {
    const payload = Buffer.from(JSON.stringify([{ seq: 1, at: 0, type: "loom.execution.started" }]), "utf8");
    const frame = Buffer.alloc(8 + payload.length);
    frame.writeUInt32LE(payload.length, 0);
    payload.copy(frame, 8);
    frame.writeUInt32LE(crc32Js(payload, crc32Js(frame.subarray(0, 4))), 4);
    expect(encodeFrame(payload).equals(frame)).toBe(true);
    const scan = scanFrames(frame);
    expect(scan.bad).toBeUndefined();
    expect(scan.frames.map((f) => f.value)).toEqual([[{ seq: 1, at: 0, type: "loom.execution.started" }]]);
    // A frame of a fixed earlier file: its stored checksum is the one the JS CRC-32 computed then.
    expect(frame.readUInt32LE(4)).toBe(OLD_CHECKSUM);
  });

  it("encodes a JSON frame straight into its buffer: the same bytes as the frame around the UTF-8 text", () => {
    const values: unknown[] = [
      [{ seq: 1, at: 0, type: "loom.execution.started" }],
      { text: "héllo wörld ✓ 日本語 🧵", lone: "\ud800 and \udfff", nested: { a: [1, 2.5, null, true] } },
      { pad: "x".repeat(70_000) + "€" },
      [],
    ];
    for (const value of values) {
      const frame = encodeJsonFrame(value);
      expect(frame.equals(encodeFrame(Buffer.from(JSON.stringify(value), "utf8")))).toBe(true);
      expect(scanFrames(frame).frames.map((f) => f.value)).toEqual([value]);
    }
  });
});
