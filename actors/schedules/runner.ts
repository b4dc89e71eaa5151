// Fires stored schedules on an app: on fs, IndexedDB and memory stores while an app that called schedule() (or
// runSchedules()) is open, on the app's clock; on PostgreSQL in every worker of the fleet (adapters/postgres/worker.ts).
//
// Exactly once per tick: a tick's execution id is derived from the schedule and the tick (tickExecutionId), and the
// start is idempotent by id (app.start refuses an id that has a log; app.submit of the same start is a no-op). A
// tick's execution is started before the schedule's next tick is written, by a compare-and-set on the schedule's
// revision: an app or worker that dies in between leaves the tick due, and whoever decides it next finds its
// execution there and starts nothing. Two deciding at once both find or start the one execution; one write wins.
import type { AnyStateMachine } from "xstate";
import type { EventStore, ScheduleStore, StoredSchedule } from "../../stores/types.js";
import { appInternals, type App, type AppPort } from "../app.js";
import { WARNING_CODES } from "../constants.js";
import { decideTicks, tickerOf, tickExecutionId } from "./ticks.js";

/** How a runner starts a tick's execution: here (app.start), or for the fleet (app.submit, a worker's). */
export interface ScheduleRunnerOptions {
  /** Submits each tick's execution to the fleet (a worker's app) instead of starting it here. */
  submit: boolean;
  /** The longest wait between two looks at the stores (another app, tab or worker may change them meanwhile). */
  pollMs: number;
}

/** A schedule runner attached to one app; it stops when the app closes. */
export class ScheduleRunner {
  private readonly port: AppPort;
  private readonly events: EventStore;
  private readonly warned = new Set<string>(); // each warning once per runner: a due schedule is looked at every poll
  private cancelTimer: (() => void) | undefined;
  private passing: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly unbind: () => void;

  constructor(
    private readonly app: App,
    private readonly store: ScheduleStore,
    private readonly options: ScheduleRunnerOptions,
  ) {
    this.port = appInternals(app);
    this.events = app.stores.events;
    this.unbind = this.port.onClose(() => this.stop());
  }

  /** Looks at the stores now (a schedule was added, replaced or resumed here). */
  wake(): void {
    if (this.stopped) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = this.pass()
      .catch((error: unknown) => {
        this.warn(`looking at the schedules failed: ${String(error)}`);
        // A failed look (the store unreachable, a database restarting) armed no timer: look again a poll later.
        this.arm(this.options.pollMs);
      })
      .finally(() => {
        this.passing = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves when the pass under way (if any) has settled: for tests and a worker's stop. */
  async settled(): Promise<void> {
    while (this.passing) await this.passing;
  }

  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.unbind();
  }

  private async pass(): Promise<void> {
    const clock = this.port.host.clock;
    const schedules = await this.store.list();
    // Read after the list: a timer that woke this pass may have fired while a simulated clock moved on.
    const now = clock.now();
    let earliest = Infinity;
    for (const listed of schedules) {
      if (this.stopped) return;
      let schedule: StoredSchedule | undefined = listed;
      if (!listed.paused && listed.nextAt !== null && listed.nextAt <= now) schedule = await this.fire(listed, now);
      // Not fired (its logic is not held here, a start failed, another wrote it first): the poll looks again.
      if (schedule && !schedule.paused && schedule.nextAt !== null) earliest = Math.min(earliest, schedule.nextAt);
    }
    this.arm(Math.min(Math.max(0, earliest - clock.now()), this.options.pollMs));
  }

  // The next look, in `wait` ms (the one timer of this runner).
  private arm(wait: number): void {
    if (this.stopped) return;
    this.cancelTimer?.();
    this.cancelTimer = this.port.host.clock.setTimer(() => {
      this.cancelTimer = undefined;
      this.wake();
    }, wait);
  }

  // Starts the due ticks of one schedule, then writes its next tick (compare-and-set); the schedule as written, or
  // undefined when nothing was written.
  private async fire(schedule: StoredSchedule, now: number): Promise<StoredSchedule | undefined> {
    const logic = this.port.host.logics.logicOf(schedule.logicId);
    if (!logic) {
      this.warn(
        `schedule "${schedule.id}" is due, but this app holds no logic "${schedule.logicId}": list it in defineConfig({ logics }) or call schedule(app, logic, ...)`,
      );
      return undefined;
    }
    const decision = decideTicks(schedule, tickerOf(schedule.spec), now);
    let { lastTick, skipped, lastSkippedAt } = schedule;
    for (const at of decision.fire) {
      if (this.stopped) return undefined;
      const executionId = tickExecutionId(schedule.id, at);
      // Started already (by a runner that died before writing the schedule, or by another one): it counts.
      if ((await this.events.head(executionId)) === 0) {
        if (schedule.overlap === "skip" && lastTick && (await this.running(lastTick.executionId))) {
          skipped++;
          lastSkippedAt = at;
          continue;
        }
        if (!(await this.startTick(logic, executionId, schedule))) return undefined;
      }
      lastTick = { at, executionId };
    }
    const next: StoredSchedule = {
      ...schedule,
      nextAt: decision.nextAt,
      ...(lastTick ? { lastTick } : {}),
      skipped,
      ...(lastSkippedAt === undefined ? {} : { lastSkippedAt }),
      missed: schedule.missed + decision.missed,
      revision: schedule.revision + 1,
    };
    if (await this.store.put(next, schedule.revision)) return next;
    this.again = true; // another app or worker wrote it meanwhile: read it again
    return undefined;
  }

  private async running(executionId: string): Promise<boolean> {
    return (await this.events.getExecution(executionId))?.status === "running";
  }

  // True once the tick's execution exists (started here, or by another runner that won the race).
  private async startTick(logic: AnyStateMachine, executionId: string, schedule: StoredSchedule): Promise<boolean> {
    const options = { executionId, input: schedule.input };
    try {
      if (this.options.submit) await this.app.submit(logic, options);
      else await this.app.start(logic, options);
      return true;
    } catch (error) {
      if ((await this.events.head(executionId)) > 0) return true;
      if (!this.stopped) this.warn(`schedule "${schedule.id}" could not start ${executionId}: ${String(error)}`);
      return false;
    }
  }

  private warn(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.port.warn({ code: WARNING_CODES.scheduleNotFired, message });
  }
}
