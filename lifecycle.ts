// loomwork/lifecycle: the data lifecycle of an app's stores (docs/security.md): the content sweep, erasure,
// export, archive segments, the content walker, and the runtime's own machines that sweep and erase.
// Functions of the app they run on (`sweep(app, options)`), or of bare stores for a CLI or a cron job
// (`sweepUnpinnedContent({ events, content, ttlMs })`): an app that never imports them does not bundle
// them (docs/adr/0011-entry-points-by-role.md).

export { sweep, archive, applyRetention } from "./actors/lifecycle/functions.js";
export { sweepUnpinnedContent, eraseSubject, exportSubject } from "./actors/lifecycle/standalone.js";
export type {
  SweepUnpinnedContentOptions,
  EraseSubjectOptions,
  ExportSubjectOptions,
  TrustOption,
} from "./actors/lifecycle/standalone.js";
export {
  visitCitedAddresses,
  retainRootsOf,
  trustedClaimCheckRefsOf,
  claimCheckRefsOf,
  claimCheckTrustOf,
} from "./actors/lifecycle/citations.js";
export type { Citation, VisitOptions, ClaimCheckTrust, TrustOptions } from "./actors/lifecycle/citations.js";
export { DEFAULT_SWEEP_BATCHES } from "./actors/constants.js";
export type { SweepOptions, SweepResult } from "./actors/lifecycle/sweep.js";
export { ContentCopiesRemainError } from "./actors/lifecycle/errors.js";
export type { ContentCopiesRemainReason, ContentDeleted, EraseSubjectResult } from "./actors/lifecycle/erase.js";
export type {
  SubjectExport,
  ExportedExecution,
  ClaimCheckedBlob,
  UnresolvedCitation,
} from "./actors/lifecycle/export.js";
export type { ArchiveOptions, ArchiveResult } from "./actors/lifecycle/retention.js";
export type {
  RetainedSummaryOutput,
  RetentionOptions,
  RetentionResult,
  RetentionRule,
  RetentionSummary,
} from "./actors/lifecycle/expiry.js";
export { retentionMachine, RETENTION_LOGIC_ID } from "./machines/retention.js";
export { sweepMachine, SWEEP_LOGIC_ID } from "./machines/sweep.js";
export { eraseCoordinatorMachine, ERASE_COORDINATOR_LOGIC_ID } from "./machines/eraseCoordinator.js";
