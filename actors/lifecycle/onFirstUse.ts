// The code of App's rarely taken paths (sweep, erase, export, archive, replay check, migration, fleet
// submit, claim-check resolution, the internal effects, the capability ring's configured layers, secret redaction, a model
// call's retry decision), in ONE module that actors/app.ts,
// actors/lifecycle/joins.ts and actors/lifecycle/maintenance.ts load on first use by dynamic import(). One
// module, not one per path: a bundler then splits an app into its start chunks and one lazy chunk, instead
// of a shared chunk per combination of paths, each compressed on its own (issue 18, bench/bundle.ts).
export { resolveClaimCheck } from "../effects/claimCheck.js";
export { claimCheckLayer } from "../effects/claimCheckPreset.js";
export { grantLayer, guardLayer, quotaLayer } from "../effects/ringLayers.js";
export { redactionLayer } from "../effects/redaction.js";
export { retryMiddleware, timeoutMiddleware } from "../effects/retry.js";
export { retryAfterMs, shouldRetryModelCall } from "../agents/retryableErrors.js";
export { isSubmitted, submitStart, submittedOutcome } from "../fleet/submit.js";
export { migrateExecution } from "../journal/migrate.js";
export { checkReplay } from "../journal/replayCheck.js";
export { resumeUnfinished } from "../journal/unfinished.js";
export { createJournalCodec } from "../journal/sealing.js";
export { erase } from "./erase.js";
export { assertSubjectOpen, erasedExecutionError } from "./erasureStatus.js";
export { exportFrom } from "./export.js";
export { INTERNAL_EFFECTS } from "./internalEffects.js";
export { archiveExecution } from "./retention.js";
export { sweepOnce } from "./sweep.js";
// Loading this module registers the runtime's own machines (machines/helpers/maintenanceIds.ts INTERNAL_MACHINES).
export { eraseCoordinatorMachine } from "../../machines/eraseCoordinator.js";
export { sweepMachine } from "../../machines/sweep.js";
