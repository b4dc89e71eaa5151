// app.submit and what app.result does for a submitted execution: the start is journaled here (the first
// macrostep, exactly as app.start writes it) and nothing runs; a worker of the fleet (loomwork/postgres
// createWorker) claims it, and the submitting app waits for its EXECUTION_ENDED in the store.
import type { AnyStateMachine } from "xstate";
import { EVENT_SCHEMA, EXECUTION_ENDED, EXECUTION_STARTED } from "../../stores/schema.js";
import type { JournalRecord, RecordOf, Stores } from "../../stores/types.js";
import type { AppHost, StartOptions } from "../appHost.js";
import { ConfigError } from "../errors.js";
import { outcomeFrom } from "../journal/outcomes.js";
import { effectSourcesOf } from "../journal/machineInfo.js";
import { planMacrostep } from "../journal/planner.js";

// Failed looks in a row (each a poll interval apart) before app.result of a submitted execution gives up.
const RESULT_RETRIES = 120;

/** What stores offer a fleet of workers (postgresStores): the queue workers claim from, and the end of an execution. */
export interface FleetPort {
  /** Puts the execution on the fleet's queue (before its start is journaled); idempotent. */
  enqueue(executionId: string): Promise<void>;
  /** True when the execution was submitted to the fleet. */
  isSubmitted(executionId: string): Promise<boolean>;
  /**
   * Resolves when the execution may have ended after the call (a notification, or the poll interval passed):
   * look again. Call it before looking, so that an end between the look and the wait is not missed.
   */
  waitForEnd(executionId: string): Promise<void>;
}

/** The fleet port of `stores`, when they have one. */
export function fleetOf(stores: Stores): FleetPort | undefined {
  if (!("fleet" in stores)) return undefined;
  const fleet: unknown = stores.fleet;
  return isFleetPort(fleet) ? fleet : undefined;
}

function isFleetPort(value: unknown): value is FleetPort {
  return typeof value === "object" && value !== null && ["enqueue", "isSubmitted", "waitForEnd"].every((name) => name in value && typeof Reflect.get(value, name) === "function");
}

/**
 * Journals the start of `logic` as `executionId` without running it: the fleet runs it. A second submit of
 * the same id writes nothing (start is idempotent by execution id).
 */
export async function submitStart(
  host: AppHost,
  stores: Stores,
  logic: AnyStateMachine,
  options: StartOptions,
  input: unknown,
  assertSubjectOpen: (subject: string) => Promise<void>,
): Promise<void> {
  const fleet = fleetOf(stores);
  if (!fleet) throw new ConfigError("stores", "app.submit needs stores a fleet of workers shares: postgresStores() from loomwork/postgres. To run here, call app.start.");
  const { executionId, subject } = options;
  if (subject !== undefined) await assertSubjectOpen(subject);
  host.register(logic);
  await fleet.enqueue(executionId);
  if ((await stores.events.head(executionId)) > 0) return;
  const execution = await host.create(logic, executionId, subject);
  const started: RecordOf<typeof EXECUTION_STARTED> = {
    seq: 1, at: host.clock.now(), type: EXECUTION_STARTED, logicId: logic.id, ...execution.identity,
    ...(subject === undefined ? {} : { subject }), input: input ?? null, schema: EVENT_SCHEMA.version,
  };
  // The effects are the worker's: the logic's own effect ids plan its first macrostep as the worker will replay it.
  const effectIds = new Set([...host.effectIds, ...effectSourcesOf(logic)]);
  const step = planMacrostep({ machine: logic, executionId, effectIds }, undefined, started);
  try {
    await host.journal.append(executionId, 0, step.records, subject);
  } catch (error) {
    // Submitted concurrently with the same id: the other submit journaled the start.
    if ((await stores.events.head(executionId)) > 0) return;
    throw error;
  }
}

/** True when `executionId` was submitted to the fleet of `stores` (app.result then waits for a worker). */
export async function isSubmitted(stores: Stores, executionId: string): Promise<boolean> {
  const fleet = fleetOf(stores);
  return fleet !== undefined && (await fleet.isSubmitted(executionId));
}

/** For app.result: the outcome of a submitted execution, from whichever worker runs it. */
export async function submittedOutcome(stores: Stores, executionId: string, log: (id: string) => Promise<JournalRecord[]>): Promise<unknown> {
  const fleet = fleetOf(stores)!;
  // The database may restart while the fleet runs the execution: look again, up to a bound of failures in a row.
  for (let failures = 0; ; ) {
    const woken = fleet.waitForEnd(executionId).catch(() => undefined);
    let ended: RecordOf<typeof EXECUTION_ENDED> | undefined;
    try {
      const info = await stores.events.getExecution(executionId);
      if (info?.status !== "running") ended = (await log(executionId)).findLast((r): r is RecordOf<typeof EXECUTION_ENDED> => r.type === EXECUTION_ENDED);
      failures = 0;
    } catch (error) {
      if (++failures >= RESULT_RETRIES) throw error;
    }
    if (ended) return outcomeFrom(executionId, ended);
    await woken;
  }
}
