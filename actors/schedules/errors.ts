// The refusals of loomwork/schedules: each names the value at fault, and nothing was stored.
import { LoomworkError, LoomworkTypeError } from "../../stores/errors.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";

/** A schedule's `cron` expression that does not parse (croner's reason attached). Nothing was stored. */
export class InvalidCronError extends LoomworkTypeError {
  static override readonly name: string = "InvalidCronError";
  readonly scheduleId: string;
  /** The expression refused. */
  readonly cron: string;
  constructor(scheduleId: string, cron: string, reason: string) {
    super(
      RUNTIME_ERROR_CODES.invalidCron,
      `Schedule "${scheduleId}": the cron expression ${JSON.stringify(cron)} does not parse (${reason}). ` +
        `Give five fields (minute hour day-of-month month day-of-week), or six with seconds first, e.g. "0 3 * * *". Nothing was stored.`,
    );
    this.scheduleId = scheduleId;
    this.cron = cron;
  }
}

/** A schedule's `timezone` that is not an IANA time zone name this runtime knows. Nothing was stored. */
export class UnknownTimezoneError extends LoomworkTypeError {
  static override readonly name: string = "UnknownTimezoneError";
  readonly scheduleId: string;
  /** The time zone refused. */
  readonly timezone: string;
  constructor(scheduleId: string, timezone: string) {
    super(
      RUNTIME_ERROR_CODES.unknownTimezone,
      `Schedule "${scheduleId}": ${JSON.stringify(timezone)} is not a time zone this runtime knows. ` +
        `Give an IANA name such as "Europe/Paris" or "UTC" (Intl.supportedValuesOf("timeZone") lists them). Nothing was stored.`,
    );
    this.scheduleId = scheduleId;
    this.timezone = timezone;
  }
}

/**
 * A schedule id the stores already hold with another definition (logic, spec, timezone, input, overlap or
 * catch-up). The same definition again is a no-op; `replace: true` replaces it. Nothing was stored.
 */
export class ScheduleConflictError extends LoomworkError {
  static override readonly name: string = "ScheduleConflictError";
  readonly scheduleId: string;
  /** The first option that differs from the stored schedule's. */
  readonly field: string;
  constructor(scheduleId: string, field: string, difference: string) {
    super(
      RUNTIME_ERROR_CODES.scheduleConflict,
      `Schedule "${scheduleId}" exists with another ${field}: ${difference}. Nothing was stored. ` +
        `Pass { replace: true } to replace it, deleteSchedule(app, "${scheduleId}") first, or choose another id.`,
    );
    this.scheduleId = scheduleId;
    this.field = field;
  }
}

/** A schedule id the stores do not hold (pause, resume, delete). */
export class UnknownScheduleError extends LoomworkError {
  static override readonly name: string = "UnknownScheduleError";
  readonly scheduleId: string;
  constructor(scheduleId: string) {
    super(
      RUNTIME_ERROR_CODES.unknownSchedule,
      `No schedule "${scheduleId}" is stored: listSchedules(app) lists the ones there are.`,
    );
    this.scheduleId = scheduleId;
  }
}
