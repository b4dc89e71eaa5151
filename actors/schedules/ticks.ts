// When a schedule's ticks fall, and which of the due ones a firing starts (the catch-up policy). Pure but for
// croner, which computes a cron expression's matches in a time zone, DST included.
import { Cron } from "croner";
import type { ScheduleSpec, StoredSchedule } from "../../stores/types.js";

/**
 * A tick due longer ago than this when it is decided was missed (a downtime, a pause): the catch-up policy decides
 * whether it fires. A later one is only late (a busy machine, a poll interval) and fires under every policy.
 */
export const SCHEDULE_ON_TIME_MS = 10_000;

/** The most ticks one decision starts for one schedule (`catchUp: "all"` after a long downtime continues at once). */
export const MAX_TICKS_PER_DECISION = 100;

// Stale ticks counted one by one at most (a cron expression's; an `every` period's are counted by arithmetic).
const MAX_COUNTED = 10_000;

/** The ticks of one schedule spec. */
export interface Ticker {
  /** The first tick strictly after `at`, or null when there is none (a cron expression with no further match). */
  next(at: number): number | null;
  /** The last tick at or before `at`, or null. */
  atOrBefore(at: number): number | null;
}

/** The ticker of `spec`: an `every` period's ticks are its multiples since the Unix epoch (Temporal's convention). */
export function tickerOf(spec: ScheduleSpec): Ticker {
  if ("every" in spec) {
    const every = spec.every;
    return {
      next: (at) => (Math.floor(at / every) + 1) * every,
      atOrBefore: (at) => Math.floor(at / every) * every,
    };
  }
  const cron = new Cron(spec.cron, spec.timezone === undefined ? {} : { timezone: spec.timezone });
  return {
    next: (at) => cron.nextRun(new Date(at))?.getTime() ?? null,
    atOrBefore: (at) => cron.previousRuns(1, new Date(at + 1))[0]?.getTime() ?? null,
  };
}

/** The execution id of a schedule's tick: `sched:<schedule id>:<tick, ISO 8601 in UTC>`. */
export function tickExecutionId(scheduleId: string, tick: number): string {
  return `sched:${scheduleId}:${new Date(tick).toISOString()}`;
}

/** What a firing at `now` does with one schedule: the ticks to start, in order, the ones left unfired, and the next tick. */
export interface TickDecision {
  fire: number[];
  missed: number;
  nextAt: number | null;
}

/**
 * Decides the due ticks of `schedule` at `now`. A due tick is one at or after its `nextAt` and at or before `now`.
 * Ticks due within `SCHEDULE_ON_TIME_MS` fire under every policy; older ones (missed) by `catchUp`: "all" fires
 * each, "latest" only the newest of them and only when no on-time tick follows it, "skip" none.
 */
export function decideTicks(schedule: StoredSchedule, ticker: Ticker, now: number): TickDecision {
  const nextAt = schedule.nextAt;
  if (schedule.paused || nextAt === null || nextAt > now) return { fire: [], missed: 0, nextAt };
  if (schedule.catchUp === "all") {
    const fire: number[] = [];
    let at: number | null = nextAt;
    while (at !== null && at <= now && fire.length < MAX_TICKS_PER_DECISION) {
      fire.push(at);
      at = ticker.next(at);
    }
    return { fire, missed: 0, nextAt: at };
  }
  const staleUntil = now - SCHEDULE_ON_TIME_MS; // a tick at or before this was missed
  const onTime: number[] = [];
  for (
    let at = nextAt > staleUntil ? nextAt : ticker.next(staleUntil);
    at !== null && at <= now && onTime.length < MAX_TICKS_PER_DECISION;
    at = ticker.next(at)
  )
    onTime.push(at);
  const latestStale = nextAt <= staleUntil ? ticker.atOrBefore(staleUntil) : null;
  const stale = latestStale === null ? 0 : countTicks(schedule.spec, ticker, nextAt, latestStale);
  const fire = schedule.catchUp === "latest" && onTime.length === 0 && latestStale !== null ? [latestStale] : onTime;
  const missed = stale - (fire === onTime ? 0 : 1);
  return { fire, missed, nextAt: ticker.next(fire.at(-1) ?? now) };
}

// The ticks from `first` to `last`, both included (both ticks).
function countTicks(spec: ScheduleSpec, ticker: Ticker, first: number, last: number): number {
  if ("every" in spec) return Math.round((last - first) / spec.every) + 1;
  let count = 0;
  for (let at: number | null = first; at !== null && at <= last && count < MAX_COUNTED; at = ticker.next(at)) count++;
  return count;
}
