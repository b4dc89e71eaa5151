// The schedule operations on a ScheduleStore, each a compare-and-set loop: create or compare, pause, resume,
// delete. Functions of the store (the CLI runs them without an app) that schedule(app, ...) and the rest call.
import type { ScheduleStore, StoredSchedule } from "../../stores/types.js";
import { ScheduleConflictError, UnknownScheduleError } from "./errors.js";
import type { ScheduleDefinition } from "./options.js";
import { tickerOf } from "./ticks.js";

/**
 * Stores a schedule of `definition` (its first tick: the first after `now`), or finds the stored one: the same
 * definition is a no-op (returns it as stored), another one a ScheduleConflictError unless `replace`.
 */
export async function putSchedule(
  store: ScheduleStore,
  definition: ScheduleDefinition,
  replace: boolean,
  now: number,
): Promise<StoredSchedule> {
  const nextAt = tickerOf(definition.spec).next(now);
  for (;;) {
    const existing = await store.get(definition.id);
    if (!existing) {
      const created: StoredSchedule = {
        ...definition,
        paused: false,
        createdAt: now,
        nextAt,
        skipped: 0,
        missed: 0,
        revision: 1,
      };
      if (await store.put(created, 0)) return created;
      continue;
    }
    const differs = definitionDifference(existing, definition);
    if (differs === undefined) return existing;
    if (!replace) throw new ScheduleConflictError(definition.id, differs[0], differs[1]);
    const replaced: StoredSchedule = { ...existing, ...definition, nextAt, revision: existing.revision + 1 };
    if (await store.put(replaced, existing.revision)) return replaced;
  }
}

/** Pauses (no tick fires while paused) or resumes a schedule; a resumed schedule's missed ticks follow its catch-up policy. */
export async function setSchedulePaused(store: ScheduleStore, id: string, paused: boolean): Promise<StoredSchedule> {
  for (;;) {
    const existing = await store.get(id);
    if (!existing) throw new UnknownScheduleError(id);
    if (existing.paused === paused) return existing;
    const next = { ...existing, paused, revision: existing.revision + 1 };
    if (await store.put(next, existing.revision)) return next;
  }
}

/** Removes a schedule; the executions its ticks started stay. */
export async function removeSchedule(store: ScheduleStore, id: string): Promise<void> {
  if (!(await store.delete(id))) throw new UnknownScheduleError(id);
}

// The first field of the definition that differs, and how; undefined when they are the same.
function definitionDifference(stored: StoredSchedule, given: ScheduleDefinition): [string, string] | undefined {
  if (stored.logicId !== given.logicId)
    return ["logic", `it starts logic "${stored.logicId}", and this call gives "${given.logicId}"`];
  const spec = (s: ScheduleDefinition["spec"]) =>
    "every" in s ? `every ${s.every} ms` : `cron "${s.cron}"${s.timezone === undefined ? "" : ` in ${s.timezone}`}`;
  if (canonical(stored.spec) !== canonical(given.spec))
    return ["spec", `it fires at ${spec(stored.spec)}, and this call gives ${spec(given.spec)}`];
  if (canonical(stored.input) !== canonical(given.input)) return ["input", "its input differs from this call's"];
  if (stored.overlap !== given.overlap)
    return ["overlap", `its overlap is "${stored.overlap}", and this call gives "${given.overlap}"`];
  if (stored.catchUp !== given.catchUp)
    return ["catchUp", `its catchUp is "${stored.catchUp}", and this call gives "${given.catchUp}"`];
  return undefined;
}

// JSON text with object keys sorted: two equal values give the same text whatever the order a store kept.
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
