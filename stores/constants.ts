// The storage layer's codes and names, each defined once: the error classes of stores/ and adapters/
// take their `code` from here, the runtime and the CLI branch on the same constants, and the
// subject-key derivation that record sealing and EncryptingContentStore share is named here.

/**
 * The stable `code` of every storage error (stores and adapters). Branch on these, not on messages.
 * The runtime's own codes are in `actors/constants.ts` (`ERROR_CODES` holds both).
 */
export const STORE_ERROR_CODES = {
  /** `ConcurrencyError`: an append at a stale seq. */
  concurrency: "LOOM_CONCURRENCY",
  /** `JournalCorruptionError`: a journal file damaged where bytes were durable. */
  journalCorrupt: "LOOM_JOURNAL_CORRUPT",
  /** `StorageQuotaError`: the quota ran out; nothing of the write was kept. */
  storageQuota: "LOOM_STORAGE_QUOTA",
  /** `WriterLockedError`: another process or tab holds the writer lock. */
  writerLocked: "LOOM_WRITER_LOCKED",
  /** `WriterFailedError`: a write failed and the writer refuses further writes. */
  writerFailed: "LOOM_WRITER_FAILED",
  /** `SubjectErasedError` (and `ExecutionErasedError`): the subject's key was destroyed. */
  subjectErased: "LOOM_SUBJECT_ERASED",
  /** `KeyMissingError`: a created, never-erased subject's key is gone. */
  keyMissing: "LOOM_KEY_MISSING",
  /** `RecordAuthenticationError`: a sealed record fails authentication. */
  recordAuthentication: "LOOM_RECORD_AUTHENTICATION",
  /** `ContentAuthenticationError`: a sealed blob fails authentication. */
  contentAuthentication: "LOOM_CONTENT_AUTHENTICATION",
  /** `IndexedDbConnectionError`: the IndexedDB connection is gone. */
  indexedDbConnection: "LOOM_IDB_CONNECTION",
  /** The fs stores were closed and are used again. */
  storeClosed: "LOOM_STORE_CLOSED",
  /** `BridgeSendError` (loomwork/bridge): the owner refused or failed a send from a UI process. */
  bridgeSend: "LOOM_BRIDGE_SEND",
  /** `BridgeDisconnectedError` (loomwork/bridge): the owner is gone (its port closed) before a send was answered, or before it was made. */
  bridgeDisconnected: "LOOM_BRIDGE_DISCONNECTED",
  /** loomwork/bridge was given something that is not a message port (a `LoomworkTypeError`). */
  bridgePort: "LOOM_BRIDGE_PORT",
  /** loomwork/bridge was given a bad option (a `heartbeatMs` that is not a positive finite number; a `LoomworkTypeError`). */
  bridgeOptions: "LOOM_BRIDGE_OPTIONS",
  /** loomwork/fs `serveControl`: the owning app refused a command from the CLI (`allow` said no, or a bad request). */
  controlRefused: "LOOM_CONTROL_REFUSED",
  /** loomwork/fs `serveControl` was called with a bad option (no `dir`, an `allow` that is no function, ...). */
  controlOptions: "LOOM_CONTROL_OPTIONS",
  /** The control socket's directory is missing, or is not private to this user (owner, mode, a symlink): nothing listens or connects there. */
  controlSocket: "LOOM_CONTROL_SOCKET",
  /** `serveControl` found a live app serving the directory's control socket already: one server per journal directory. */
  controlInUse: "LOOM_CONTROL_IN_USE",
  /** The CLI got a reply on the control socket that is not a control reply (not JSON, wrong shape, a line too long). */
  controlReply: "LOOM_CONTROL_REPLY",
  /** `ReadOnlyStoreError`: a write to stores opened read-only. */
  readOnly: "LOOM_READ_ONLY",
  /** `MalformedIdError`: an execution id or subject that is not a well-formed string (a lone surrogate). */
  malformedId: "LOOM_MALFORMED_ID",
  /** The journal directory's file system cannot hold what the fs content store needs. */
  fsUnsupported: "LOOM_FS_UNSUPPORTED",
  /** `InsecureContextError`: no WebCrypto (`crypto.subtle`), as on a page served over plain http from a LAN name. */
  insecureContext: "LOOM_INSECURE_CONTEXT",
} as const;

/** One of the storage layer's error codes. */
export type StoreErrorCode = (typeof STORE_ERROR_CODES)[keyof typeof STORE_ERROR_CODES];

/** The HKDF salt of every key derived from a subject's key (record sealing and sealed blobs). */
export const SUBJECT_KEY_HKDF_SALT = "loomwork/subject-key/v1";

/** Bytes of an AES-GCM IV (96 bits) as record sealing and sealed blobs use it. */
export const AES_GCM_IV_BYTES = 12;

/** Bytes of an AES-GCM authentication tag (128 bits). */
export const AES_GCM_TAG_BYTES = 16;
