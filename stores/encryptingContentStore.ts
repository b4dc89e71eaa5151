// EncryptingContentStore: a ContentStore that seals every blob under its subject's key (ADR 0140 D8,
// ContentStore SPI 1.5.0), so destroying the key (the shred) erases the blobs too. WebCrypto only.
//
// Design:
// - Two subkeys per subject, HKDF-SHA-256 from the subject's key with distinct `info`: an HMAC key
//   (addressing: it fixes the IV, hence the ciphertext, hence the address) and an AES-256-GCM key (sealing).
// - Blob = 0x01 ‖ iv ‖ AES-GCM(sealKey, iv, bytes, aad), iv = first 96 bits of HMAC(ivKey, bytes).
//   Deterministic per (subject, bytes): a re-put writes identical bytes, so the inner store dedupes it.
// - The public address IS the inner store's address of the sealed blob (`sha256:<hex of blob>`), not a
//   separate `hmac:` address. It is keyed per subject all the same (the blob is a keyed function of the
//   bytes), so equal bytes of two subjects get unrelated addresses and equal bytes of one subject
//   dedupe; and no hmac -> inner index is needed, so `has`, `delete`, `deleteIfUntouchedSince`,
//   `touchClock` and `list` pass straight through with the inner store's atomicity.
// - Binding blob and address: `get` re-hashes a `sha256:` blob against its address (an inner store that
//   serves one blob under another's address is caught); the AAD (a constant that names this format)
//   cannot hold the address, which is the hash of the ciphertext itself.
//
// Why a synthetic (SIV-style) IV is safe here: AES-GCM breaks when one key seals two DIFFERENT
// plaintexts under one IV (keystream reuse, GHASH key recovery). The IV here is a PRF of the
// plaintext under an independent key, so it repeats only (a) for identical plaintext, which yields
// the identical blob and reveals only equality, which the keyed address already reveals to whoever
// holds the store; or (b) on a 96-bit PRF collision between different plaintexts, the same ~2^-33
// risk at 2^32 blobs per subject as NIST's random-IV bound. The IV leaks nothing else about the bytes.
//
// Wrap a store of its own: `list` yields everything the inner store holds.
import { bufferSource as buffer, deriveSubjectSubkey, sha256Hex, utf8 } from "./bytes.js";
import { AES_GCM_IV_BYTES as IV_BYTES, AES_GCM_TAG_BYTES as TAG_BYTES, STORE_ERROR_CODES } from "./constants.js";
import { LoomworkError } from "./errors.js";
import {
  CONTENT_STORE_SPI_VERSION,
  type ContentAddress,
  type ContentInfo,
  type ContentPutOptions,
  type ContentStore,
  type KeyStore,
} from "./types.js";

/** A sealed blob failed authentication: altered, served under another address, or read with another subject. */
export class ContentAuthenticationError extends LoomworkError {
  static override readonly name: string = "ContentAuthenticationError";
  readonly address: ContentAddress;
  readonly subject: string;
  constructor(address: ContentAddress, subject: string, reason: string, options?: { cause?: unknown }) {
    super(
      STORE_ERROR_CODES.contentAuthentication,
      `Blob ${address} does not authenticate for subject "${subject}" (${reason}). ` +
        `Read it with the subject that put it; if that is the subject, the content store was altered: restore it from a backup.`,
      options,
    );
    this.address = address;
    this.subject = subject;
  }
}

const FORMAT_VERSION = 1;
const IV_KEY_INFO = utf8("loomwork/content/v1/iv-hmac-sha256");
const SEAL_KEY_INFO = utf8("loomwork/content/v1/aes-256-gcm");
const AAD = utf8("loomwork/content/v1");

const ivKeyOf = (raw: Uint8Array) =>
  deriveSubjectSubkey(raw, IV_KEY_INFO, { name: "HMAC", hash: "SHA-256", length: 256 }, ["sign"]);
const sealKeyOf = (raw: Uint8Array, usage: KeyUsage) =>
  deriveSubjectSubkey(raw, SEAL_KEY_INFO, { name: "AES-GCM", length: 256 }, [usage]);

function requireSubject(method: "put" | "get", options: ContentPutOptions | undefined): string {
  const subject = options?.subject;
  if (typeof subject === "string" && subject !== "") return subject;
  throw new TypeError(
    `EncryptingContentStore.${method} needs options.subject (a non-empty string): every blob is sealed under, ` +
      `and addressed by, its subject's key. Pass { subject } of the execution whose data the bytes are.`,
  );
}

/**
 * A ContentStore that seals each blob under its subject's key, with per-subject addresses.
 * Optional methods (`delete`, `deleteIfUntouchedSince`, `touchClock`, `close`) exist only when the inner store has them.
 *
 * @example
 * const content = new EncryptingContentStore(new MemoryContentStore(), keys);
 * const address = await content.put(bytes, { subject: "user-1" });
 * await content.get(address, { subject: "user-1" }); // bytes; undefined once keys.destroy("user-1")
 */
export class EncryptingContentStore implements ContentStore {
  readonly spiVersion = CONTENT_STORE_SPI_VERSION;
  readonly sealsContent = true;
  // `declare`: no own property is defined unless the inner store has the method.
  declare readonly delete?: (address: ContentAddress) => Promise<boolean>;
  declare readonly deleteIfUntouchedSince?: (address: ContentAddress, cutoff: number) => Promise<boolean>;
  declare readonly touchClock?: () => Promise<number>;
  declare readonly close?: () => Promise<void>;
  private readonly inner: ContentStore;
  private readonly keys: KeyStore;

  constructor(inner: ContentStore, keys: KeyStore) {
    this.inner = inner;
    this.keys = keys;
    const { delete: del, deleteIfUntouchedSince, touchClock, close } = inner;
    if (del) this.delete = (address) => del.call(inner, address);
    if (deleteIfUntouchedSince)
      this.deleteIfUntouchedSince = (address, cutoff) => deleteIfUntouchedSince.call(inner, address, cutoff);
    if (touchClock) this.touchClock = () => touchClock.call(inner);
    if (close) this.close = () => close.call(inner);
  }

  /** Seals `bytes` under `options.subject`'s key (created on first use); rejects with `SubjectErasedError` once it is destroyed. */
  async put(bytes: Uint8Array, options?: ContentPutOptions): Promise<ContentAddress> {
    const subject = requireSubject("put", options);
    const raw = await this.keys.getOrCreate(subject);
    const [ivKey, sealKey] = await Promise.all([ivKeyOf(raw), sealKeyOf(raw, "encrypt")]);
    const iv = new Uint8Array(await crypto.subtle.sign("HMAC", ivKey, buffer(bytes))).subarray(0, IV_BYTES);
    const ciphertext = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: buffer(AAD) },
      sealKey,
      buffer(bytes),
    );
    const blob = new Uint8Array(1 + IV_BYTES + ciphertext.byteLength);
    blob[0] = FORMAT_VERSION;
    blob.set(iv, 1);
    blob.set(new Uint8Array(ciphertext), 1 + IV_BYTES);
    return this.inner.put(blob);
  }

  /**
   * The plaintext, or undefined when the blob is missing or the subject was erased (its key destroyed).
   * Rejects with `ContentAuthenticationError` when the blob was altered or belongs to another subject.
   */
  async get(address: ContentAddress, options?: ContentPutOptions): Promise<Uint8Array | undefined> {
    const subject = requireSubject("get", options);
    const raw = await this.keys.get(subject);
    if (!raw && (await this.keys.isDestroyed(subject))) return undefined;
    const blob = await this.inner.get(address);
    if (!blob) return undefined;
    const fail = (reason: string, cause?: unknown) =>
      new ContentAuthenticationError(address, subject, reason, cause === undefined ? undefined : { cause });
    if (!raw) throw fail("the subject has no key, so nothing was sealed for it");
    if (address.startsWith("sha256:") && address !== `sha256:${await sha256Hex(blob)}`)
      throw fail("the blob's hash differs from its address");
    if (blob.byteLength < 1 + IV_BYTES + TAG_BYTES || blob[0] !== FORMAT_VERSION)
      throw fail("not a sealed blob of format 1");
    const sealKey = await sealKeyOf(raw, "decrypt");
    try {
      const plaintext = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: buffer(blob.subarray(1, 1 + IV_BYTES)), additionalData: buffer(AAD) },
        sealKey,
        buffer(blob.subarray(1 + IV_BYTES)),
      );
      return new Uint8Array(plaintext);
    } catch (cause) {
      throw fail("AES-GCM tag mismatch", cause);
    }
  }

  has(address: ContentAddress): Promise<boolean> {
    return this.inner.has(address);
  }

  list(): AsyncIterable<ContentInfo> {
    return this.inner.list();
  }
}
