// Byte helpers shared by stores and adapters: browser-safe (WebCrypto, TextEncoder), no node:*.
import { SUBJECT_KEY_HKDF_SALT } from "./constants.js";
import { InsecureContextError } from "./errors.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** UTF-8 byte length of a string without allocating its encoding. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

/**
 * WebCrypto's `crypto.subtle`, or InsecureContextError naming `where` when there is none (a page that is not
 * a secure context: plain http from a LAN name), instead of a TypeError on `undefined` at first use.
 */
export function subtleCrypto(where: string): SubtleCrypto {
  const scope = globalThis as {
    crypto?: { subtle?: SubtleCrypto };
    isSecureContext?: boolean;
    location?: { origin?: string };
  };
  const subtle = scope.crypto?.subtle;
  if (subtle) return subtle;
  throw new InsecureContextError(where, { secure: scope.isSecureContext, origin: scope.location?.origin });
}

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await subtleCrypto("hashing (SHA-256)").digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return toHex(new Uint8Array(digest));
}

/** The plain content address of bytes. */
export async function contentAddress(bytes: Uint8Array): Promise<string> {
  return `sha256:${await sha256Hex(bytes)}`;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/**
 * FNV-1a (32-bit) of a string's UTF-16 code units, as an unsigned integer: a cheap, synchronous,
 * stable fingerprint (the same in every process and store), not a cryptographic one.
 */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

// WebCrypto's BufferSource wants an ArrayBuffer-backed view; the bytes loomwork hands it always are.
export const bufferSource = (bytes: Uint8Array) => bytes as Uint8Array<ArrayBuffer>;

/**
 * A key derived from a subject's raw key by HKDF-SHA-256 under the one subject-key salt, with its own
 * `info`: record sealing and EncryptingContentStore each derive their subkeys this way, so the raw key
 * is never used directly by two primitives.
 */
export async function deriveSubjectSubkey(
  raw: Uint8Array,
  info: Uint8Array,
  algorithm: HmacKeyGenParams | AesKeyGenParams,
  usages: KeyUsage[],
): Promise<CryptoKey> {
  const subtle = subtleCrypto("deriving a subject's key");
  const base = await subtle.importKey("raw", bufferSource(raw), "HKDF", false, ["deriveKey"]);
  const salt = bufferSource(utf8(SUBJECT_KEY_HKDF_SALT));
  return subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt, info: bufferSource(info) },
    base,
    algorithm,
    false,
    usages,
  );
}
