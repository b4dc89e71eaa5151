// How IndexedDB failures surface: quota as StorageQuotaError, lost connections as
// IndexedDbConnectionError; every other error passes through unchanged.
import { STORE_ERROR_CODES } from "../../stores/constants.js";
import { LoomworkError, StorageQuotaError } from "../../stores/errors.js";

/**
 * Why an IndexedDB connection refuses calls: the stores were closed; another connection deleted the
 * database; the database vanished while they were open (site data cleared: a forced close, then no
 * database to reopen); a newer version; no IndexedDB at all.
 */
export type IndexedDbConnectionReason = "closed" | "deleted" | "vanished" | "newer-version" | "unavailable";

/** The connection to the database is gone and will not come back by itself. */
export class IndexedDbConnectionError extends LoomworkError {
  static override readonly name: string = "IndexedDbConnectionError";
  readonly database: string;
  readonly reason: IndexedDbConnectionReason;
  constructor(database: string, reason: IndexedDbConnectionReason, options?: { cause?: unknown }) {
    super(STORE_ERROR_CODES.indexedDbConnection, connectionMessage(database, reason), options);
    this.database = database;
    this.reason = reason;
  }
}

function connectionMessage(database: string, reason: IndexedDbConnectionReason): string {
  switch (reason) {
    case "closed":
      return `IndexedDB stores "${database}" were closed; open them again with indexedDbStores({ name: "${database}" }).`;
    case "deleted":
      return `IndexedDB database "${database}" was deleted by another connection (a tab, devtools or a retention job); open the stores again to start from an empty database.`;
    case "vanished":
      return (
        `IndexedDB database "${database}" vanished while its stores were open: the browser closed the connection and the database is gone ` +
        `(site data cleared in the browser's settings or devtools, or storage evicted); everything it held is gone, and it is not recreated behind the app's back. ` +
        `Open the stores again (indexedDbStores({ name: "${database}" })) to start from an empty database, or reload the page.`
      );
    case "newer-version":
      return `IndexedDB database "${database}" was upgraded by a newer loomwork in another tab; this tab runs an older schema and stopped writing. Reload the page.`;
    case "unavailable":
      return `IndexedDB is not available here: pass indexedDB and IDBKeyRange to indexedDbStores(), and in Node install the IDB globals first (import "fake-indexeddb/auto").`;
  }
}

const QUOTA_NAMES = new Set(["QuotaExceededError", "NS_ERROR_DOM_QUOTA_REACHED"]);

/**
 * True when `error` is, or wraps, a quota failure. Browsers report it as a QuotaExceededError on
 * the request, as the transaction's `error` behind an AbortError, or nested as `cause` / Dexie's `inner`.
 */
export function isQuotaExceeded(error: unknown, depth = 0): boolean {
  if (typeof error !== "object" || error === null || depth > 4) return false;
  const e = error as { name?: unknown; cause?: unknown; inner?: unknown };
  if (typeof e.name === "string" && QUOTA_NAMES.has(e.name)) return true;
  return isQuotaExceeded(e.cause, depth + 1) || isQuotaExceeded(e.inner, depth + 1);
}

/** Maps a failed transaction's error to the typed error callers branch on. */
export function toStoreError(error: unknown, transactionError: unknown, what: string): unknown {
  if (isQuotaExceeded(error) || isQuotaExceeded(transactionError)) {
    return new StorageQuotaError(what, { cause: isQuotaExceeded(error) ? error : transactionError });
  }
  return error;
}
