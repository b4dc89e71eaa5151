// The options of schedule(app, logic, options), checked whole before anything is stored.
import { Cron } from "croner";
import { checkStoredId } from "../../stores/ids.js";
import type { ScheduleSpec, StoredSchedule } from "../../stores/types.js";
import { ConfigError } from "../errors.js";
import { InvalidCronError, UnknownTimezoneError } from "./errors.js";

/**
 * Options of `schedule(app, logic, options)` (loomwork/schedules): when the schedule fires (`cron` or `every`, one
 * of them), what each tick starts, and what happens to a tick that overlaps a running one or was missed.
 *
 * @example
 * await schedule(app, report, { id: "nightly", cron: "0 3 * * *", timezone: "Europe/Paris", input: { scope: "all" } });
 */
export interface ScheduleOptions {
  /**
   * The schedule's id, unique in the stores. Each tick starts one execution whose id is derived from it and the
   * tick: `sched:<id>:<tick as ISO 8601 in UTC>`, e.g. `sched:nightly:2026-12-06T02:00:00.000Z`.
   */
  id: string;
  /**
   * A cron expression: five fields (minute hour day-of-month month day-of-week) or six (seconds first), read by
   * croner (names, ranges, steps, `L`, `#`, and `@daily`-style nicknames). Give `cron` or `every`, not both.
   */
  cron?: string;
  /**
   * The IANA time zone `cron` is read in (e.g. "Europe/Paris"): ticks follow its wall clock across DST changes (a
   * time skipped by spring-forward fires at the first time after it, once; a time repeated by fall-back fires once).
   * Only with `cron`.
   * @defaultValue "UTC"
   */
  timezone?: string;
  /**
   * A fixed period in milliseconds, a positive integer: ticks at its multiples since the Unix epoch (every
   * 60_000 fires at each whole minute of UTC). Give `cron` or `every`, not both.
   */
  every?: number;
  /** The input of every tick's execution, plain JSON, stored with the schedule. */
  input?: unknown;
  /**
   * A tick while the previous tick's execution still runs: `"skip"` starts nothing for it and counts it in the
   * schedule's `skipped` (and `lastSkippedAt`); `"allow"` starts it anyway.
   * @defaultValue "skip"
   */
  overlap?: "skip" | "allow";
  /**
   * Ticks missed while no app or worker fired the schedule (a downtime or a pause), that is due more than
   * `SCHEDULE_ON_TIME_MS` (10 s) ago when it fires again: `"latest"` starts the newest of them (only when no
   * on-time tick follows it), `"all"` starts each, in order, `"skip"` none. The ticks left are counted in `missed`.
   * @defaultValue "latest"
   */
  catchUp?: "skip" | "latest" | "all";
  /**
   * Replaces a stored schedule of this id that has another definition (its ticks then follow the new one from now
   * on, its counters and pause kept). Without it that is a `ScheduleConflictError`; the same definition again is a no-op.
   * @defaultValue false
   */
  replace?: boolean;
}

const KEYS = new Set(["id", "cron", "timezone", "every", "input", "overlap", "catchUp", "replace"]);

/** The definition part of a stored schedule, from checked options: what a second `schedule` call is compared on. */
export type ScheduleDefinition = Pick<StoredSchedule, "id" | "logicId" | "spec" | "input" | "overlap" | "catchUp">;

/** Checks `options` whole; returns the definition to store (the input not yet checked: the logic's start does) and `replace`. */
export function checkScheduleOptions(
  options: ScheduleOptions,
  logicId: string,
): { definition: ScheduleDefinition; replace: boolean } {
  const value: unknown = options;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ConfigError("schedule.options", "an object { id, cron | every, timezone?, input?, overlap?, catchUp? }.");
  for (const key of Object.keys(options))
    if (!KEYS.has(key))
      throw new ConfigError(`schedule.${key}`, `not an option of schedule(); the options are ${[...KEYS].join(", ")}.`);
  const { id, cron, timezone, every } = options;
  if (typeof id !== "string" || id === "")
    throw new ConfigError("schedule.id", "a non-empty string naming the schedule.");
  checkStoredId(id, "schedule id");
  if ((cron === undefined) === (every === undefined))
    throw new ConfigError(
      cron === undefined ? "schedule.cron" : "schedule.every",
      `give exactly one of cron (an expression) and every (milliseconds) for schedule "${id}"; ${cron === undefined ? "neither was given" : "both were given"}.`,
    );
  let spec: ScheduleSpec;
  if (every !== undefined) {
    if (typeof every !== "number" || !Number.isSafeInteger(every) || every <= 0)
      throw new ConfigError(
        "schedule.every",
        `a positive integer of milliseconds for schedule "${id}"; got ${String(every)}.`,
      );
    if (timezone !== undefined)
      throw new ConfigError(
        "schedule.timezone",
        `only with cron: an every period is the same in every time zone (schedule "${id}").`,
      );
    spec = { every };
  } else {
    if (typeof cron !== "string") throw new InvalidCronError(id, String(cron), "not a string");
    if (timezone !== undefined) checkTimezone(id, timezone);
    let next: Date | null;
    try {
      next = new Cron(cron, timezone === undefined ? {} : { timezone }).nextRun(new Date(0));
    } catch (error) {
      throw new InvalidCronError(id, cron, error instanceof Error ? error.message : String(error));
    }
    if (next === null) throw new InvalidCronError(id, cron, "it never matches");
    spec = timezone === undefined ? { cron } : { cron, timezone };
  }
  const overlap = options.overlap ?? "skip";
  if (overlap !== "skip" && overlap !== "allow")
    throw new ConfigError(
      "schedule.overlap",
      `"skip" or "allow" for schedule "${id}"; got ${JSON.stringify(overlap)}.`,
    );
  const catchUp = options.catchUp ?? "latest";
  if (catchUp !== "skip" && catchUp !== "latest" && catchUp !== "all")
    throw new ConfigError(
      "schedule.catchUp",
      `"skip", "latest" or "all" for schedule "${id}"; got ${JSON.stringify(catchUp)}.`,
    );
  const replace = options.replace ?? false;
  if (typeof replace !== "boolean")
    throw new ConfigError("schedule.replace", `a boolean for schedule "${id}"; got ${typeof replace}.`);
  return { definition: { id, logicId, spec, input: options.input ?? null, overlap, catchUp }, replace };
}

// Intl knows the IANA names the platform has: the same table croner computes offsets with.
function checkTimezone(id: string, timezone: unknown): void {
  if (typeof timezone !== "string" || timezone === "") throw new UnknownTimezoneError(id, String(timezone));
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    throw new UnknownTimezoneError(id, timezone);
  }
}
