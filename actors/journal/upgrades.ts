// loomwork/upgrades: the replay check and migration, functions of the app they read, so an app that never
// upgrades a logic does not bundle them (docs/adr/0011). They reach the app through its internal port.
import type { AnyStateMachine } from "xstate";
import { appInternals, type App } from "../app.js";
import { checked } from "../errors.js";
import { migrateExecution, type MigrateOptions, type MigrateResult } from "./migrate.js";
import { replayAgainst, type ReplayCheckOptions, type ReplayCheckReport } from "./replayCheck.js";

export type { MigrateOptions, MigrateResult, MigrationSource } from "./migrate.js";
export type { ReplayCheckOptions, ReplayCheckReport, ReplayCheckResult } from "./replayCheck.js";

/**
 * Replays the stored journals of `logic`'s id against it, running nothing: per execution compatible or where it diverges (docs/upgrades.md).
 *
 * @example
 * const { ok, results } = await checkReplay(app, flowV2, { limit: 1000 });
 */
export function checkReplay(
  app: App,
  logic: AnyStateMachine,
  options?: ReplayCheckOptions,
): Promise<ReplayCheckReport> {
  const { host } = appInternals(app);
  return checked(
    () => host.logics.checkEffects(logic),
    () => replayAgainst(host, logic, options),
  );
}

/**
 * Moves a parked execution to another version of its logic, journaled (docs/upgrades.md, "Migrating"); refuses one running here.
 *
 * @example
 * await migrate(app, "run-1", flowV2, { migrate: ({ context }) => ({ context: { ...context, tier: "free" } }) });
 */
export function migrate(
  app: App,
  executionId: string,
  to: AnyStateMachine,
  options?: MigrateOptions,
): Promise<MigrateResult> {
  const port = appInternals(app);
  return checked(
    () => port.assertOpen("migrate an execution"),
    () => migrateExecution(port.host, app.stores, port.runsHere(executionId), executionId, to, options),
  );
}
