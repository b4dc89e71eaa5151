// Length-framed, checksummed records: the byte format of every file the fs adapter writes.
//
// A frame is [u32 LE payload length][u32 LE CRC-32 of (length bytes ++ payload)][payload], where
// the payload is UTF-8 JSON (an object or an array), or, with `compression: "deflate"`, that JSON text
// compressed (stores/compression.ts: COMPRESSED_MAGIC then a deflate stream; node:zlib's deflate here,
// the same bytes CompressionStream("deflate") reads and writes). The checksum covers the length so a
// flipped length bit is caught even when it still lands inside the file, and it covers the compressed bytes.
import zlib from "node:zlib";
import { COMPRESSED_MAGIC, isCompressed, type Compression } from "../../stores/compression.js";

/** Bytes before a frame's payload: its length and its checksum. */
export const FRAME_HEADER_BYTES = 8;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3, as zlib and PNG) in JavaScript, chainable: the fallback where node:zlib has no `crc32`. */
export function crc32Js(bytes: Uint8Array, seed = 0): number {
  let c = (seed ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

type NativeCrc32 = (data: Uint8Array, value?: number) => number;

/** node:zlib's native CRC-32 (Node 20.15 and later, 22.2 and later); undefined on older platforms. */
export const nativeCrc32: NativeCrc32 | undefined =
  typeof (zlib as { crc32?: unknown }).crc32 === "function" ? (zlib as { crc32: NativeCrc32 }).crc32 : undefined;

/**
 * CRC-32 (IEEE 802.3, as zlib and PNG), chainable: pass the previous result as `seed`. Native where the
 * platform has it, else `crc32Js`: the same value either way, so the bytes on disk do not change.
 */
export const crc32: (bytes: Uint8Array, seed?: number) => number = nativeCrc32
  ? (bytes, seed = 0) => nativeCrc32(bytes, seed)
  : crc32Js;

/** One frame around `payload`. */
export function encodeFrame(payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.set(payload, FRAME_HEADER_BYTES);
  frame.writeUInt32LE(crc32(payload, crc32(frame.subarray(0, 4))), 4);
  return frame;
}

/** One frame around the JSON text of `value`; compressed when `compression` says so and that is smaller. */
export function encodeJsonFrame(value: unknown, compression: Compression = "none"): Buffer {
  const json = JSON.stringify(value);
  if (compression !== "none") return encodeFrame(smaller(Buffer.from(json, "utf8")));
  // Plain: the UTF-8 text is encoded straight into the frame (no intermediate buffer, no second copy).
  const length = Buffer.byteLength(json, "utf8");
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32LE(length, 0);
  frame.write(json, FRAME_HEADER_BYTES, "utf8");
  frame.writeUInt32LE(crc32(frame.subarray(FRAME_HEADER_BYTES), crc32(frame.subarray(0, 4))), 4);
  return frame;
}

/** The compressed form of `plain` (magic + deflate) when it is shorter, else `plain`. */
export function smaller(plain: Uint8Array): Uint8Array {
  const body = zlib.deflateSync(plain);
  if (COMPRESSED_MAGIC.length + body.length >= plain.length) return plain;
  return Buffer.concat([COMPRESSED_MAGIC, body]);
}

/** The plain bytes of a stored payload: inflated when it carries the compressed-value magic. Throws when damaged. */
export function plainPayload(payload: Uint8Array): Uint8Array {
  return isCompressed(payload) ? zlib.inflateSync(payload.subarray(COMPRESSED_MAGIC.length)) : payload;
}

export interface Frame {
  /** File offset of the frame's first byte. */
  offset: number;
  /** File offset just past the frame. */
  end: number;
  value: unknown;
}

export interface BadFrame {
  offset: number;
  reason: string;
  /**
   * True when no valid frame follows the bad one: the bytes from `offset` on are a torn tail (an
   * unacknowledged write cut short), which may be truncated. False means a frame in the middle is
   * damaged: data after it would be lost by truncating, so it must be reported.
   */
  torn: boolean;
  /** File offset of the first valid frame after the bad one, when there is one (`torn` is false). */
  next?: number;
}

export interface FrameScan {
  frames: Frame[];
  /** File offset just past the last valid frame. */
  end: number;
  bad?: BadFrame;
}

const OPENERS = new Set([0x7b, 0x5b]); // { [ (a compressed payload opens with COMPRESSED_MAGIC instead)
const CLOSERS = new Set([0x7d, 0x5d]); // } ]

function checksumMatches(bytes: Uint8Array, at: number, length: number): boolean {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const expected = view.readUInt32LE(at + 4);
  return (
    crc32(
      bytes.subarray(at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + length),
      crc32(bytes.subarray(at, at + 4)),
    ) === expected
  );
}

// A valid frame anywhere after `from` proves the damage before it is not a torn tail. Payloads are
// JSON text, so inside them a "length" read from 4 ASCII bytes is > 0x20202020 and fails the bound
// at once; the brackets filter the rest before a checksum is computed. Linear in practice.
function validFrameAfter(bytes: Uint8Array, from: number): number | undefined {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = from; at + FRAME_HEADER_BYTES + 2 <= bytes.length; at++) {
    const length = view.readUInt32LE(at);
    const end = at + FRAME_HEADER_BYTES + length;
    if (length < 2 || end > bytes.length) continue;
    const json = OPENERS.has(bytes[at + FRAME_HEADER_BYTES]!) && CLOSERS.has(bytes[end - 1]!);
    if (!json && !isCompressed(bytes.subarray(at + FRAME_HEADER_BYTES, end))) continue;
    if (checksumMatches(bytes, at, length)) return at;
  }
  return undefined;
}

/**
 * Parses the frames of `bytes`, whose first byte sits at file offset `base`, up to the first bad
 * frame. Never throws on bad data: the caller decides between truncating a torn tail and failing.
 */
export function scanFrames(bytes: Uint8Array, base = 0): FrameScan {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const frames: Frame[] = [];
  let at = 0;
  const bad = (reason: string): FrameScan => {
    const next = validFrameAfter(bytes, at + 1);
    return {
      frames,
      end: base + at,
      bad: {
        offset: base + at,
        reason,
        torn: next === undefined,
        ...(next === undefined ? {} : { next: base + next }),
      },
    };
  };
  while (at < bytes.length) {
    if (at + FRAME_HEADER_BYTES > bytes.length)
      return bad(`frame header cut short (${bytes.length - at} of ${FRAME_HEADER_BYTES} bytes)`);
    const length = view.readUInt32LE(at);
    if (at + FRAME_HEADER_BYTES + length > bytes.length) {
      return bad(`frame of ${length} bytes runs past the end of the file`);
    }
    if (!checksumMatches(bytes, at, length)) return bad("checksum mismatch");
    let value: unknown;
    const payload = view.subarray(at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + length);
    if (isCompressed(payload)) {
      try {
        value = JSON.parse(Buffer.from(plainPayload(payload)).toString("utf8"));
      } catch {
        return bad("checksum is valid but the compressed payload does not inflate to JSON");
      }
    } else {
      try {
        value = JSON.parse(view.toString("utf8", at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + length));
      } catch {
        return bad("checksum is valid but the payload is not JSON");
      }
    }
    const end = at + FRAME_HEADER_BYTES + length;
    frames.push({ offset: base + at, end: base + end, value });
    at = end;
  }
  return { frames, end: base + at };
}
