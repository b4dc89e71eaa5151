// schedule(app, logic, options) and the rest of loomwork/schedules: functions of the app (docs/adr/0011), so an
// app that never schedules never bundles croner.
import type { AnyStateMachine } from "xstate";
import type { ScheduleStore, StoredSchedule } from "../../stores/types.js";
import { appInternals, type App } from "../app.js";
import { ConfigError } from "../errors.js";
import { checkScheduleOptions, type ScheduleOptions } from "./options.js";
import { ScheduleRunner } from "./runner.js";
import { putSchedule, removeSchedule, setSchedulePaused } from "./store.js";
import { tickExecutionId } from "./ticks.js";

// How long an app's runner waits at most between two looks at the stores (another tab may have changed them).
const LOCAL_POLL_MS = 60_000;

// The runner of each app that fires schedules here (one per app; it stops when the app closes).
const runners = new WeakMap<App, ScheduleRunner>();

/**
 * Stores a durable schedule that starts `logic` at each tick, and (unless the stores are a fleet's) fires the stored
 * schedules on this app while it is open. The same definition again is a no-op, so an app may declare its schedules
 * at every boot; another definition under the same id is a `ScheduleConflictError` unless `replace: true`. Checked
 * whole first: a bad option is refused with a typed error naming it (`InvalidCronError`, `UnknownTimezoneError`,
 * `ConfigError`), and nothing is stored.
 *
 * On PostgreSQL stores (`postgresStores`), the workers of the fleet fire it (`createWorker`), and this app only
 * stores it. See docs/scaling.md, "Schedules".
 *
 * @example
 * await schedule(app, report, { id: "nightly", cron: "0 3 * * *", timezone: "Europe/Paris", input: { scope: "all" } });
 */
export async function schedule(
  app: App,
  logic: AnyStateMachine | string,
  options: ScheduleOptions,
): Promise<StoredSchedule> {
  const port = appInternals(app);
  port.assertOpen("schedule a logic");
  const store = storeOf(app);
  const machine = port.host.logics.startLogic(logic);
  const { definition, replace } = checkScheduleOptions(options, machine.id);
  // The checks of a start that need no store: the logic, its effects (when it runs here) and the input.
  const fleet = app.stores.fleet !== undefined;
  const input = port.host.logics.checkStart(
    machine,
    { executionId: tickExecutionId(definition.id, 0), input: definition.input },
    !fleet,
  );
  port.host.logics.register(machine);
  const stored = await putSchedule(store, { ...definition, input: input ?? null }, replace, port.host.clock.now());
  if (!fleet) runnerOf(app, store).wake();
  return stored;
}

/**
 * Fires the stored schedules on this app while it is open (what `schedule` does on its first call), without
 * declaring one: for an app that restarts and holds the schedules' logics in `defineConfig({ logics })`. A no-op on
 * PostgreSQL stores, whose workers fire them.
 */
export function runSchedules(app: App): void {
  appInternals(app).assertOpen("run schedules");
  const store = storeOf(app);
  if (app.stores.fleet === undefined) runnerOf(app, store).wake();
}

/** Every stored schedule, ordered by id: its definition, next tick, last tick and its execution, counters, pause. */
export function listSchedules(app: App): Promise<StoredSchedule[]> {
  return storeOf(app).list();
}

/** The stored schedule of `id`, or undefined. */
export function getSchedule(app: App, id: string): Promise<StoredSchedule | undefined> {
  return storeOf(app).get(id);
}

/** Pauses a schedule: no tick fires while it is paused (in any app or worker). UnknownScheduleError for an id not stored. */
export function pauseSchedule(app: App, id: string): Promise<StoredSchedule> {
  return setSchedulePaused(storeOf(app), id, true);
}

/**
 * Resumes a paused schedule: the ticks due while it was paused follow its catch-up policy (`catchUp`), the later
 * ones fire on time. UnknownScheduleError for an id not stored.
 */
export async function resumeSchedule(app: App, id: string): Promise<StoredSchedule> {
  const resumed = await setSchedulePaused(storeOf(app), id, false);
  runners.get(app)?.wake();
  return resumed;
}

/** Deletes a schedule: no further tick fires; the executions it started stay. UnknownScheduleError for an id not stored. */
export function deleteSchedule(app: App, id: string): Promise<void> {
  return removeSchedule(storeOf(app), id);
}

function storeOf(app: App): ScheduleStore {
  const store = app.stores.schedules;
  if (!store)
    throw new ConfigError(
      "stores.schedules",
      "these stores keep no schedules: use memoryStores(), fsStores(), indexedDbStores() or postgresStores(), or add a ScheduleStore.",
    );
  return store;
}

function runnerOf(app: App, store: ScheduleStore): ScheduleRunner {
  let runner = runners.get(app);
  if (!runner) {
    runner = new ScheduleRunner(app, store, { submit: false, pollMs: LOCAL_POLL_MS });
    runners.set(app, runner);
  }
  return runner;
}
