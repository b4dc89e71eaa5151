// migrate(app, executionId, to) (loomwork/upgrades): an explicit, journaled move of one execution from the version of its logic it runs on to
// another (docs/upgrades.md, "Migrating"). Its state is folded on the old version, mapped by the author's
// `migrate` function to a state of the new one, and journaled as EXECUTION_MIGRATED; from then on the
// execution resumes on the new version from that state (a replay starts at the migration, as at a snapshot).
import type { AppHost } from "../appHost.js";
import type { AnyStateMachine, StateValue } from "xstate";
import { EXECUTION_MIGRATED } from "../../stores/schema.js";
import type { Stores } from "../../stores/types.js";
import { MigrationRefusedError } from "../errors.js";
import { persistState } from "./planner.js";
import { declaredVersionOf, machineHashOf } from "./versions.js";

/** The state a migration starts from: where the execution stands on its current version. */
export interface MigrationSource {
  value: StateValue;
  context: unknown;
  /** The version it runs on (undefined: none declared). */
  version: string | undefined;
}

/** Options of `migrate(app, executionId, to, options)`. */
export interface MigrateOptions {
  /**
   * Maps the old version's state to the new one's: the state value to continue in and its context.
   * @defaultValue the same value and context
   */
  migrate?: (from: MigrationSource) => { value?: StateValue; context?: unknown };
}

/** What `migrate(app, executionId, to)` journaled. */
export interface MigrateResult {
  executionId: string;
  fromVersion?: string;
  version?: string;
  /** The seq of the EXECUTION_MIGRATED record. */
  seq: number;
}

/** Journals the migration of `executionId` to `to`; see MigrateOptions. `running`: it runs in this app now. */
export async function migrateExecution(
  host: AppHost,
  stores: Stores,
  running: boolean,
  executionId: string,
  to: AnyStateMachine,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  const refuse = (reason: string) => new MigrationRefusedError(executionId, reason);
  if (running)
    throw refuse("it runs in this app: migrate it before resuming it (from a fresh app over the same stores)");
  host.logics.checkEffects(to);
  const { execution, info } = await host.rebuild(executionId);
  if (info.logicId !== to.id)
    throw refuse(
      `it runs logic "${info.logicId}", and the target is logic "${to.id}": a migration moves between versions of one logic`,
    );
  await execution.recover({ observe: false });
  const state = execution.state;
  if (execution.ended) throw refuse(`it has ended (${state.status})`);
  const inFlight = Object.values(state.pending).map((p) => p.stepId);
  if (inFlight.length)
    throw refuse(`steps are in flight (${inFlight.join(", ")}): migrate it where it waits for an event`);
  const from: MigrationSource = { value: state.snapshot.value, context: state.snapshot.context, version: info.version };
  const mapped = options.migrate ? options.migrate(from) : {};
  const snapshot = to.resolveState({ value: mapped.value ?? from.value, context: mapped.context ?? from.context });
  const version = declaredVersionOf(to);
  const lease = await stores.acquireWriter?.(executionId);
  try {
    const record = {
      seq: execution.seq + 1,
      at: host.clock.now(),
      type: EXECUTION_MIGRATED,
      ...(info.version === undefined ? {} : { fromVersion: info.version }),
      ...(version === undefined ? {} : { version }),
      machineHash: await machineHashOf(to),
      state: persistState(to, { ...state, snapshot }),
    } as const;
    await host.journal.append(executionId, execution.seq, [record], info.subject);
    // The old version's snapshot may hold a state the new one cannot restore: the migrated state replaces it.
    await host.journal.putSnapshot(executionId, { seq: record.seq, at: record.at, state: record.state }, info.subject);
    host.logics.register(to);
    return {
      executionId,
      ...(record.fromVersion === undefined ? {} : { fromVersion: record.fromVersion }),
      ...(version === undefined ? {} : { version }),
      seq: record.seq,
    };
  } finally {
    await lease?.release();
  }
}
