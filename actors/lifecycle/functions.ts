// The lifecycle functions over an app (loomwork/lifecycle): sweep, erase, export and archive, each a function
// of the app it runs on rather than a method of it, so an app that never imports them does not bundle them
// (docs/adr/0011-entry-points-by-role.md). They reach the app through its one internal port (`appInternals`)
// and register the runtime's own machines on it when first called.
import { appInternals, type App } from "../app.js";
import { checkSubject } from "../config.js";
import { checked, ConfigError } from "../errors.js";
import type { LifecycleHost } from "./host.js";
import { INTERNAL_LOGICS, runInternalStep } from "./maintenance.js";

// The runtime's own machines and steps, handed to the app by the first lifecycle function called on it.
const MAINTENANCE = { logics: INTERNAL_LOGICS, runStep: runInternalStep };
import { exportFrom, type SubjectExport } from "./export.js";
import { runErase, runSweep, type EraseSubjectResult, type SweepOptions, type SweepResult } from "./joins.js";
import { archiveExecution, type ArchiveOptions, type ArchiveResult } from "./retention.js";
import { retainOnce, type RetentionOptions, type RetentionResult } from "./expiry.js";

/** The app's lifecycle host, once it is known to be open and to hold the runtime's own machines. */
function lifecycleOf(app: App, what: string): LifecycleHost {
  const port = appInternals(app);
  port.assertOpen(what);
  port.maintenance(MAINTENANCE);
  return port.lifecycle;
}

/**
 * Reclaims the content blobs nothing load-bearing cites (ADR 0140 D6), as a journaled `loom.sweep:<n>`
 * execution: an unfinished sweep is resumed and finished first. Progress goes to the `progress` event.
 *
 * @example
 * const { deleted, kept } = await sweep(app, { ttlMs: 7 * 24 * 3600_000 });
 */
export function sweep(app: App, options: SweepOptions): Promise<SweepResult> {
  return runSweep(lifecycleOf(app, "sweep content"), options);
}

/**
 * Erases a subject (needs `compliance: { erase: true }`): plan, journal the intent, shred the key, delete
 * the subject's blobs conditionally, journal the result, as a journaled `loom.erase:<subject>:<n>`
 * execution; a crash is finished by calling it again. Rejects with ContentCopiesRemainError before the
 * shred when the blobs could not be deleted. A repeated erase is a successful no-op.
 */
export function eraseSubjectOf(app: App, subject: unknown): Promise<EraseSubjectResult> {
  const host = lifecycleOf(app, "erase a subject");
  return checked(
    () => checkSubject(subject, "eraseSubject.subject"),
    () => runErase(host, String(subject)),
  );
}

/** A subject's executions with their records opened, and every claim-checked blob they cite resolved. */
export function exportSubjectOf(app: App, subject: unknown): Promise<SubjectExport> {
  const host = lifecycleOf(app, "export a subject");
  return checked(
    () => checkSubject(subject, "exportSubject.subject"),
    () => exportFrom(host, String(subject)),
  );
}

/**
 * Moves an execution's old live records into an archive segment, by default through its latest snapshot
 * (taking one first if needed): a resume never reads an archived record; segments pin what they cite.
 *
 * @example
 * const { segment } = await archive(app, "run-1");
 */
export function archive(app: App, executionId: string, options: ArchiveOptions = {}): Promise<ArchiveResult> {
  return archiveExecution(lifecycleOf(app, "archive an execution"), executionId, options);
}

/**
 * Removes the ended executions past their retention period (`options`, else the app's `retention` config): each
 * tree once its root ended `keepFor` ms ago, kept as a summary (its outcome, usage, ids and times: `app.result` of it
 * gives `{ retained: "summary", usage }`) or not at all. It runs as a journaled `loom.retention:<n>` execution, in
 * batches: an unfinished one (a crash mid-way) is finished first. The blobs only the removed histories cited become
 * reclaimable by the next `sweep(app)`.
 *
 * @example
 * const { summarized, removed } = await applyRetention(app, { keepFor: 30 * 86_400_000, keep: "summary" });
 */
export function applyRetention(app: App, options?: RetentionOptions): Promise<RetentionResult> {
  const host = lifecycleOf(app, "apply retention");
  const given = options ?? host.retention;
  if (given === undefined)
    return Promise.reject(
      new ConfigError("retention", "no rules: pass { keepFor, keep? } or set defineConfig({ retention }) first."),
    );
  const running = host.state.retention;
  if (running) return running;
  const run = retainOnce(host, given).finally(() => (host.state.retention = undefined));
  host.state.retention = run;
  return run;
}
