// The data-lifecycle entry points outside an app: for a CLI, a cron job or a maintenance script that has
// the stores but runs no agents. Each builds a host app over the stores (no user effects) and runs the same
// journaled machine `sweep(app)` / `eraseSubject(app, subject)` runs, so a crash is finished by running it
// again. `eraseSubject` and `exportSubject` take either form: (app, subject) or (subject, { events, ... }).
import { SubjectErasedError } from "../../stores/errors.js";
import { KEY_STORE_SPI_VERSION, type ContentStore, type EventStore, type KeyStore } from "../../stores/types.js";
import { App } from "../app.js";
import { eraseSubjectOf, exportSubjectOf, sweep } from "./functions.js";
import type { RuntimeEvents } from "../bus.js";
import type { Clock } from "../clock.js";
import type { EraseSubjectResult } from "./erase.js";
import type { SubjectExport } from "./export.js";
import type { ClaimCheckTrust } from "./citations.js";
import { UNWIRED_CONTENT } from "./host.js";
import type { SweepResult } from "./sweep.js";

// A host without keys: nothing sealed can be opened (a sweep then fails closed on sealed records).
const NO_KEYS: KeyStore = Object.freeze({
  spiVersion: KEY_STORE_SPI_VERSION,
  getOrCreate: (subject: string) => Promise.reject(new SubjectErasedError(subject)),
  get: () => Promise.resolve(undefined),
  destroy: () => Promise.reject(new TypeError("No KeyStore was given: pass { keys }.")),
  isDestroyed: () => Promise.resolve(false),
});

interface HostOptions {
  events: EventStore;
  content?: ContentStore | undefined;
  keys?: KeyStore | undefined;
  clock?: Clock | undefined;
  trust?: ClaimCheckTrust | undefined;
}

/** The writer check option of the standalone entry points. */
export interface TrustOption {
  /**
   * Which recorded steps the claim-check could have written an envelope for: pass
   * `claimCheckTrustOf(config)` of the app that wrote the logs. Omitted, a retained envelope is trusted by
   * its position alone, so an unlisted tool's top-level lookalike is honoured too (over-retain).
   */
  trust?: ClaimCheckTrust;
}

// An app, also one built by the other module format's copy of the package (where `instanceof` says no);
// anything else is the store-level form's subject, which that form checks.
const isApp = (target: unknown): target is App => typeof target === "object" && target !== null;

function hostApp(options: HostOptions | undefined): App {
  if (!options || typeof options.events?.append !== "function")
    throw new TypeError("Pass { events } (an EventStore, e.g. stores.events).");
  const { events, content, keys, clock, trust } = options;
  return new App(
    {
      stores: { events, content: content ?? UNWIRED_CONTENT, keys: keys ?? NO_KEYS },
      effects: {},
      ...(keys ? { security: { crypto: { keys } } } : {}),
      compliance: { erase: true },
      ...(clock ? { clock } : {}),
    },
    trust ? { trust } : {},
  );
}

async function withHost<T>(
  options: HostOptions | undefined,
  run: (app: App) => Promise<T>,
  onProgress?: RuntimeEvents["progress"],
): Promise<T> {
  const app = hostApp(options);
  const off = onProgress ? app.on("progress", onProgress) : undefined;
  try {
    return await run(app);
  } finally {
    off?.();
    await app.close();
  }
}

/** Options of the standalone `sweepUnpinnedContent`; `trust` decides which recorded envelopes pin their blobs. */
export interface SweepUnpinnedContentOptions extends TrustOption {
  /** The event store whose executions' records cite the blobs (e.g. `stores.events`); the sweep is journaled there too. */
  events: EventStore;
  /** The store claim-checked blobs live in (execution.claimCheck.store). */
  content: ContentStore;
  /** How long a telemetry ref outlives its citation (or its execution's end). */
  ttlMs: number;
  /** With the keys, sealed records are opened and judged precisely; without, their refs pin their blobs (fail closed). */
  keys?: KeyStore;
  /** The clock that decides which TTLs have passed and stamps the sweep's records. @defaultValue the real clock */
  clock?: Clock;
  /** Journaled reclaim batches. @defaultValue 4 */
  batches?: number;
  /** Receives the sweep's progress (`{ task, done, total }`) as it goes. */
  onProgress?: RuntimeEvents["progress"];
}

/**
 * Reclaims the blobs nothing load-bearing cites, as a journaled `loom.sweep:<n>` execution (see `sweep(app, options)`).
 *
 * @example
 * const result = await sweepUnpinnedContent({ events: stores.events, content: stores.content, ttlMs: 7 * 86_400_000 });
 */
export function sweepUnpinnedContent(options: SweepUnpinnedContentOptions): Promise<SweepResult> {
  const { ttlMs, batches, onProgress }: Partial<SweepUnpinnedContentOptions> = options ?? {};
  return withHost(options, (app) => sweep(app, { ttlMs, ...(batches === undefined ? {} : { batches }) }), onProgress);
}

/** Options of the standalone `eraseSubject`; `trust` decides which recorded envelopes cite the subject's blobs. */
export interface EraseSubjectOptions extends TrustOption {
  /** The event store holding the subject's executions (e.g. `stores.events`); the erasure is journaled there too. */
  events: EventStore;
  /** The KeyStore holding the subject's key: destroying it is the shred. */
  keys: KeyStore;
  /** The store claim-checked blobs live in; without it, erasure refuses when the subject's records cite blobs. */
  content?: ContentStore;
  /** The clock the erasure's journaled records are stamped with. @defaultValue the real clock */
  clock?: Clock;
}

/**
 * Erases a subject with the eraseCoordinator machine: on an app (`compliance: { erase: true }`), or on bare
 * stores. Plan, journal the intent, shred the key, delete the subject's blobs conditionally, journal the
 * result, as a journaled `loom.erase:<subject>:<n>` execution; a crash is finished by calling it again.
 * Rejects with ContentCopiesRemainError before the shred when the blobs could not be deleted. A repeated
 * erase is a successful no-op.
 *
 * @example
 * const { contentDeleted } = await eraseSubject(app, "user-42");
 * await eraseSubject("user-42", { events: stores.events, keys: stores.keys, content: stores.content });
 */
export function eraseSubject(app: App, subject: string): Promise<EraseSubjectResult>;
export function eraseSubject(subject: string, options: EraseSubjectOptions): Promise<EraseSubjectResult>;
export function eraseSubject(target: App | string, second: string | EraseSubjectOptions): Promise<EraseSubjectResult> {
  if (isApp(target)) return eraseSubjectOf(target, second);
  const options = typeof second === "object" ? second : undefined;
  if (typeof options?.keys?.destroy !== "function")
    return Promise.reject(new TypeError("eraseSubject needs { keys }: destroying the subject's key is the shred."));
  return withHost(options, (app) => eraseSubjectOf(app, target));
}

/** Options of the standalone `exportSubject`; `trust` decides which recorded envelopes are resolved. */
export interface ExportSubjectOptions extends TrustOption {
  /** The event store holding the subject's executions (e.g. `stores.events`). */
  events: EventStore;
  /** Needed to open the records of a subject whose executions are sealed (security.crypto). */
  keys?: KeyStore;
  /** The store claim-checked blobs live in; without it every blob is reported `missing`. */
  content?: ContentStore;
}

/**
 * A subject's data: its executions with their records opened, and the blobs the claim-check offloaded for
 * them resolved; any other cited address (inside a tool's own output) is listed in `unresolved`, never
 * read. On an app, or on bare stores.
 *
 * @example
 * const { executions, claimChecked } = await exportSubject(app, "user-42");
 * await exportSubject("user-42", { events: stores.events, keys: stores.keys, content });
 */
export function exportSubject(app: App, subject: string): Promise<SubjectExport>;
export function exportSubject(subject: string, options: ExportSubjectOptions): Promise<SubjectExport>;
export function exportSubject(target: App | string, second: string | ExportSubjectOptions): Promise<SubjectExport> {
  if (isApp(target)) return exportSubjectOf(target, second);
  return withHost(typeof second === "object" ? second : undefined, (app) => exportSubjectOf(app, target));
}
