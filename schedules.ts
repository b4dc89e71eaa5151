// loomwork/schedules: durable schedules (cron with time zones, or a fixed period) that start one execution per
// tick, exactly once across apps and workers (docs/scaling.md, "Schedules"). Functions of the app they run on
// (`schedule(app, logic, options)`): an app that never imports them does not bundle them, nor croner
// (docs/adr/0011-entry-points-by-role.md).

export {
  schedule,
  runSchedules,
  listSchedules,
  getSchedule,
  pauseSchedule,
  resumeSchedule,
  deleteSchedule,
} from "./actors/schedules/functions.js";
export type { ScheduleOptions } from "./actors/schedules/options.js";
export { SCHEDULE_ON_TIME_MS, tickExecutionId } from "./actors/schedules/ticks.js";
export {
  InvalidCronError,
  UnknownTimezoneError,
  ScheduleConflictError,
  UnknownScheduleError,
} from "./actors/schedules/errors.js";
export type { StoredSchedule, ScheduleSpec, ScheduleStore } from "./stores/types.js";
