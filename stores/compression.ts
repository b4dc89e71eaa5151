// Optional compression of bytes at rest (log frames, snapshots, blobs): one format that every adapter and
// platform reads, browser-safe (CompressionStream / DecompressionStream, in browsers and Node 18+).
//
// A compressed value is COMPRESSED_MAGIC (4 bytes) followed by a "deflate" stream (zlib, RFC 1950, with its
// Adler-32) of the plain bytes. Plain values are stored as they were: a reader tells the two apart by the
// magic, so a directory or database mixing both reads fine, and every later version reads both. Where a
// plain value could itself begin with the magic (a blob's arbitrary bytes), the reader checks the content
// address first (adapters do: fs and IndexedDB content stores).

/** Whether stored bytes are compressed: `"deflate"` (the one format) or `"none"` (the default). */
export type Compression = "deflate" | "none";

/** NUL, "L", "Z", format 1: never the first byte of JSON text (what log frames and snapshots hold otherwise). */
export const COMPRESSED_MAGIC: Uint8Array = Uint8Array.of(0x00, 0x4c, 0x5a, 0x01);

/** The `CompressionStream` format after the magic. */
export const COMPRESSION_STREAM_FORMAT = "deflate";

/** True when `bytes` start with the magic of a compressed value. */
export function isCompressed(bytes: Uint8Array): boolean {
  return bytes.length >= COMPRESSED_MAGIC.length && COMPRESSED_MAGIC.every((b, i) => bytes[i] === b);
}

/** The option value checked: undefined is "none". */
export function compressionOption(value: unknown, where: string): Compression {
  if (value === undefined || value === "none") return "none";
  if (value === "deflate") return "deflate";
  throw new RangeError(`${where}: compression must be "deflate" or "none"; got ${JSON.stringify(value)}.`);
}

async function through(bytes: Uint8Array, stream: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  const writer = stream.writable.getWriter();
  const written = writer.write(bytes as Uint8Array<ArrayBuffer>).then(() => writer.close());
  // A damaged stream fails both sides: the reader's rejection is the one surfaced, this one awaited below.
  written.catch(() => undefined);
  const chunks: Uint8Array[] = [];
  const reader = stream.readable.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value as Uint8Array);
  }
  await written;
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** The magic and the deflate stream of `bytes`. */
export async function compressBytes(bytes: Uint8Array): Promise<Uint8Array> {
  const body = await through(bytes, new CompressionStream(COMPRESSION_STREAM_FORMAT));
  const out = new Uint8Array(COMPRESSED_MAGIC.length + body.length);
  out.set(COMPRESSED_MAGIC, 0);
  out.set(body, COMPRESSED_MAGIC.length);
  return out;
}

/** The plain bytes of a compressed value (`isCompressed` holds); rejects when the stream is damaged. */
export async function decompressBytes(bytes: Uint8Array): Promise<Uint8Array> {
  if (!isCompressed(bytes))
    throw new RangeError("decompressBytes: the bytes do not start with the compressed-value magic");
  return through(bytes.subarray(COMPRESSED_MAGIC.length), new DecompressionStream(COMPRESSION_STREAM_FORMAT));
}

/** `bytes` compressed when `compression` says so and it makes them smaller; else `bytes` unchanged. */
export async function maybeCompress(bytes: Uint8Array, compression: Compression): Promise<Uint8Array> {
  if (compression === "none") return bytes;
  const packed = await compressBytes(bytes);
  return packed.length < bytes.length ? packed : bytes;
}

/**
 * A snapshot's state as a store that keeps structured values (IndexedDB) stores it: unchanged, or, when
 * compressing makes it smaller, the compressed bytes of its JSON text. A runtime state is plain JSON (or a
 * sealed envelope, also JSON), never a byte array, so a `Uint8Array` with the magic is always a packed one.
 */
export async function packState(state: unknown, compression: Compression): Promise<unknown> {
  if (compression === "none") return state;
  const plain = new TextEncoder().encode(JSON.stringify(state));
  const packed = await compressBytes(plain);
  return packed.length < plain.length ? packed : state;
}

/** The state `packState` stored, as it was given. */
export async function unpackState(stored: unknown): Promise<unknown> {
  if (!(stored instanceof Uint8Array) || !isCompressed(stored)) return stored;
  return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(await decompressBytes(stored)));
}

/**
 * A blob's plain bytes from what a content store holds under `address`: the stored bytes when they have the
 * address (plain blobs, including one that happens to begin with the magic), else their decompressed form;
 * undefined when neither has the address (damage).
 */
export async function unpackBlob(
  stored: Uint8Array,
  address: string,
  addressOf: (bytes: Uint8Array) => Promise<string>,
): Promise<Uint8Array | undefined> {
  if (!isCompressed(stored) || (await addressOf(stored)) === address) return stored;
  let plain: Uint8Array;
  try {
    plain = await decompressBytes(stored);
  } catch {
    return undefined;
  }
  return (await addressOf(plain)) === address ? plain : undefined;
}
