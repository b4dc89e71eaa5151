// loomwork/upgrades: checking stored journals against a new version of a logic, and moving a parked
// execution to another version (docs/upgrades.md). Functions of the app they read (`checkReplay(app, logic)`),
// so an app that never upgrades does not bundle them (docs/adr/0011-entry-points-by-role.md).

export { checkReplay, migrate } from "./actors/journal/upgrades.js";
export type {
  ReplayCheckOptions,
  ReplayCheckReport,
  ReplayCheckResult,
  MigrateOptions,
  MigrateResult,
  MigrationSource,
} from "./actors/journal/upgrades.js";
export { MigrationRefusedError } from "./actors/errors.js";
