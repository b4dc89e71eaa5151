// Record sealing (`security.crypto`, ADR 0140 D8): the payload of a subject's journal records is
// sealed under a key derived from the subject's key, so destroying that key (the shred) makes every
// record's payload unreadable while the log stays a valid, replay-shaped, sweepable log.
//
// A sealed record keeps readable what the runtime and the sweep need without the key: `seq`, `at`,
// `type`, the ids `stepId`, `effectId`, `timerId`, the transition's `from` / `to`, and `refs` (the
// content addresses the payload cites, computed by the caller). Everything else goes into
// `sealed: base64(iv ‖ AES-GCM ciphertext and tag)`.
//
// Why it holds:
// - The AAD is the canonical JSON of [executionId, seq, type, readable header]. Its prefix
//   [executionId, seq, type] stops a payload from being moved to another position or execution; the
//   header part stops the readable fields (a step id, `refs`) from being edited under a valid payload.
//   Canonical (sorted-key) JSON keeps the AAD stable through any store that re-serialises records.
// - The IV is 96 random bits per record (`recordIv`): NIST SP 800-38D allows 2^32 such seals per key,
//   far beyond one subject's logs (a repeat is a birthday event near 2^48).
// - The AES key is HKDF-derived from the subject's 32-byte key with its own `info`, so the raw key is
//   never used directly by two primitives (EncryptingContentStore derives its own subkeys likewise).
// - `refs` present (even empty) means "the caller listed what this record cites"; absent means unknown,
//   and a fail-closed sweep must then treat the record as citing anything.
import { bufferSource as buffer, deriveSubjectSubkey, fromBase64, fromUtf8, toBase64, utf8 } from "./bytes.js";
import { AES_GCM_IV_BYTES as IV_BYTES, AES_GCM_TAG_BYTES as TAG_BYTES } from "./constants.js";
import { RecordAuthenticationError } from "./sealingErrors.js";
import type { StoredRecord } from "./types.js";

/** Fields a sealed record keeps readable beside `seq`, `at`, `type` (when the record has them). */
export const READABLE_RECORD_FIELDS = ["stepId", "effectId", "timerId", "from", "to"] as const;

/** A record whose payload is sealed: `sealed` is base64(iv ‖ ciphertext); `refs` lists the content it cites. */
export interface SealedJournalRecord extends StoredRecord {
  sealed: string;
  refs?: string[];
}

// RecordAuthenticationError lives in ./sealingErrors.ts, so the package entry exports it without importing this module.
export { RecordAuthenticationError };

const SUBJECT_KEY_BYTES = 32;
const RECORD_KEY_INFO = utf8("loomwork/record/v1/aes-256-gcm");
const HEADER_FIELDS: readonly string[] = ["seq", "at", "type", ...READABLE_RECORD_FIELDS];

/**
 * The IV of one record seal: 96 fresh random bits. Exported so a test can draw many cheaply.
 */
export function recordIv(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(IV_BYTES));
}

/** True when the record's payload is sealed (it carries a `sealed` string). */
export function isSealed(record: StoredRecord): record is SealedJournalRecord {
  return typeof record.sealed === "string";
}

// Imported keys per raw subject key, most recently used last. Keys are compared by bytes because a
// KeyStore hands out a fresh copy per call. Bounded, and zeroed on eviction or `forgetRecordKeys`.
const KEY_CACHE_SIZE = 32;
const keyCache: { raw: Uint8Array; key: Promise<CryptoKey> }[] = [];

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

function deriveRecordKey(raw: Uint8Array): Promise<CryptoKey> {
  return deriveSubjectSubkey(raw, RECORD_KEY_INFO, { name: "AES-GCM", length: 256 }, ["encrypt", "decrypt"]);
}

/**
 * The AES-GCM record key derived from a subject's raw 32-byte key (cached), for callers that seal
 * many records and prefer to hold a `CryptoKey`. `sealRecord(r, raw)` and
 * `sealRecord(r, await importRecordKey(raw))` are interchangeable.
 */
export function importRecordKey(raw: Uint8Array): Promise<CryptoKey> {
  if (raw.byteLength !== SUBJECT_KEY_BYTES) {
    return Promise.reject(
      new TypeError(
        `A subject key is ${SUBJECT_KEY_BYTES} bytes (KeyStore.getOrCreate); got ${raw.byteLength}. Pass the key the KeyStore returned.`,
      ),
    );
  }
  const hit = keyCache.findIndex((entry) => sameBytes(entry.raw, raw));
  if (hit >= 0) {
    const [entry] = keyCache.splice(hit, 1);
    keyCache.push(entry!);
    return entry!.key;
  }
  const entry = { raw: raw.slice(), key: deriveRecordKey(raw) };
  keyCache.push(entry);
  if (keyCache.length > KEY_CACHE_SIZE) keyCache.shift()!.raw.fill(0);
  entry.key.catch(() => {
    const index = keyCache.indexOf(entry);
    if (index >= 0) keyCache.splice(index, 1);
  });
  return entry.key;
}

/** Drops every cached record key (call after a shred so no derived key outlives the subject's key in this process). */
export function forgetRecordKeys(): void {
  for (const entry of keyCache.splice(0)) entry.raw.fill(0);
}

function recordKey(key: Uint8Array | CryptoKey): Promise<CryptoKey> {
  if (ArrayBuffer.isView(key)) return importRecordKey(key);
  if (key.algorithm.name !== "AES-GCM" || !key.usages.includes("encrypt") || !key.usages.includes("decrypt")) {
    return Promise.reject(
      new TypeError(
        `A record key must be an AES-GCM CryptoKey for encrypt and decrypt (got ${key.algorithm.name}); pass the raw subject key or importRecordKey(raw).`,
      ),
    );
  }
  return Promise.resolve(key);
}

// JSON with object keys sorted at every depth: the same value gives the same text whatever key
// order a store hands it back in.
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function additionalData(executionId: string, header: Record<string, unknown>): Uint8Array<ArrayBuffer> {
  return buffer(utf8(canonicalJson([executionId, header.seq, header.type, header])));
}

/**
 * Seals a record's payload under the subject's key; the result is an ordinary record to append.
 *
 * @param citedAddresses the content addresses the record cites, kept readable as `refs` for the sweep and erasure
 * @example
 * const sealed = await sealRecord(record, await keys.getOrCreate(subject), executionId, visitCitedAddresses(record));
 */
export async function sealRecord(
  record: StoredRecord,
  key: Uint8Array | CryptoKey,
  executionId: string,
  citedAddresses?: Iterable<string>,
): Promise<StoredRecord> {
  if (typeof executionId !== "string" || executionId === "")
    throw new TypeError("sealRecord needs the executionId of the record's execution (a non-empty string).");
  if (isSealed(record))
    throw new TypeError(
      `Execution "${executionId}": record at seq ${record.seq} is already sealed; seal each record once.`,
    );
  const header: Record<string, unknown> = {};
  // Null prototype: a JSON key "__proto__" must stay an own field, not reach the prototype setter.
  const payload: Record<string, unknown> = Object.create(null);
  for (const [field, value] of Object.entries(record)) {
    if (value === undefined) continue;
    if (HEADER_FIELDS.includes(field)) header[field] = value;
    else payload[field] = value;
  }
  if (citedAddresses) header.refs = [...new Set(citedAddresses)];
  const iv = recordIv();
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv: buffer(iv), additionalData: additionalData(executionId, header) },
    await recordKey(key),
    buffer(utf8(JSON.stringify(payload))),
  );
  const sealed = new Uint8Array(IV_BYTES + ciphertext.byteLength);
  sealed.set(iv);
  sealed.set(new Uint8Array(ciphertext), IV_BYTES);
  return { ...(header as Pick<StoredRecord, "seq" | "at" | "type">), sealed: toBase64(sealed) };
}

/**
 * Opens a sealed record: the result deep-equals the record that was sealed. A record without
 * `sealed` is returned unchanged. Rejects with `RecordAuthenticationError` when it does not authenticate.
 */
export async function openRecord(
  record: StoredRecord,
  key: Uint8Array | CryptoKey,
  executionId: string,
): Promise<StoredRecord> {
  if (!isSealed(record)) return record;
  const { sealed, ...header } = record;
  const fail = (reason: string, cause?: unknown) =>
    new RecordAuthenticationError(executionId, record.seq, reason, cause === undefined ? undefined : { cause });
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(sealed);
  } catch (cause) {
    throw fail("`sealed` is not base64", cause);
  }
  if (bytes.byteLength < IV_BYTES + TAG_BYTES) throw fail("`sealed` is too short to hold an IV and a tag");
  const cryptoKey = await recordKey(key);
  let plaintext: ArrayBuffer;
  try {
    plaintext = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: buffer(bytes.subarray(0, IV_BYTES)), additionalData: additionalData(executionId, header) },
      cryptoKey,
      buffer(bytes.subarray(IV_BYTES)),
    );
  } catch (cause) {
    throw fail("AES-GCM tag mismatch", cause);
  }
  let payload: unknown;
  try {
    payload = JSON.parse(fromUtf8(new Uint8Array(plaintext)));
  } catch (cause) {
    throw fail("the payload is not JSON", cause);
  }
  if (payload === null || typeof payload !== "object" || Array.isArray(payload))
    throw fail("the payload is not a JSON object");
  // `refs` was the caller's annotation, not part of the record; a record's own `refs` is in the payload.
  const { refs: _refs, ...readable } = header;
  return { ...readable, ...(payload as Record<string, unknown>) } as StoredRecord;
}
