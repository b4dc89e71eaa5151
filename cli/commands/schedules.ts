// loomwork schedules: the durable schedules of a journal directory, or of a PostgreSQL schema with --postgres
// (loomwork/schedules); `pause`, `resume` and `delete` change one. Read and written through the stores' ScheduleStore.
import { removeSchedule, setSchedulePaused } from "../../actors/schedules/store.js";
import { UnknownScheduleError } from "../../actors/schedules/errors.js";
import type { ScheduleStore, StoredSchedule } from "../../stores/types.js";
import { command, type Context } from "../context.js";
import { NotFoundError, UsageError } from "../errors.js";
import { openJournal } from "../journal.js";
import { postgresOptions, postgresTarget } from "../postgres.js";
import { printable, table, timestamp } from "../terminal.js";

const ACTIONS = ["list", "pause", "resume", "delete"];

export const schedules = command(
  "schedules",
  "List the durable schedules (id, spec, time zone, next tick, last tick and its execution, paused); pause, resume or delete one.",
  {
    args: {
      "[action]": "list (the default), pause, resume or delete",
      "[id]": "the schedule id, for pause, resume and delete",
    },
    options: postgresOptions(
      "the schedules of a PostgreSQL fleet (a connection string) instead of a journal directory",
    ),
    details: [
      "On a journal directory the schedules fire while an app that called schedule() is open; on PostgreSQL, while any " +
        "worker runs. list opens the directory read-only (beside a running app); pause, resume and delete take its writer " +
        "lock, so they run while no app holds it. On PostgreSQL every action runs beside the fleet.",
      "A paused schedule starts nothing; resumed, the ticks it missed follow its catchUp policy. A deleted schedule " +
        "starts nothing more; the executions it started stay.",
    ],
    examples: [
      "loomwork schedules",
      "loomwork schedules --postgres postgres://localhost/app --json",
      "loomwork schedules pause nightly --postgres postgres://localhost/app",
      "loomwork schedules delete nightly",
    ],
  },
  async (ctx) => {
    const [action = "list", id, ...extra] = ctx.positionals;
    if (!ACTIONS.includes(action))
      throw new UsageError(`unknown action "${action}": one of ${ACTIONS.join(", ")}`, "loomwork schedules --help");
    if (action === "list" ? id !== undefined : id === undefined || extra.length > 0)
      throw new UsageError(
        action === "list" ? "list takes no id" : `${action} takes one schedule id`,
        `e.g. loomwork schedules ${action === "list" ? "" : `${action} nightly`}`,
      );
    const { store, close } = await openSchedules(ctx, action !== "list");
    try {
      if (action === "list") return print(ctx, await store.list());
      try {
        if (action === "delete") await removeSchedule(store, id!);
        else await setSchedulePaused(store, id!, action === "pause");
      } catch (error) {
        if (error instanceof UnknownScheduleError)
          throw new NotFoundError(`no schedule "${id}"`, "`loomwork schedules` lists the schedules there are.");
        throw error;
      }
      const done = { delete: "deleted", pause: "paused", resume: "resumed" }[action as "delete" | "pause" | "resume"];
      if (ctx.json) ctx.printJson({ id, [done]: true });
      else ctx.out(`${done} schedule ${printable(id!)}`);
    } finally {
      await close();
    }
  },
);

// The schedules of the journal directory (read-only unless `write`), or of the PostgreSQL schema.
async function openSchedules(ctx: Context, write: boolean): Promise<{ store: ScheduleStore; close(): Promise<void> }> {
  const target = postgresTarget(ctx, { fromEnv: false });
  if (target) {
    // Loaded only here: the other commands (and this one on a directory) never load node-postgres.
    const { postgresStores } = await import("../../adapters/postgres/index.js");
    const stores = await postgresStores({ ...target, max: 2 });
    return { store: stores.schedules, close: () => stores.close() };
  }
  if (!write) return { store: (await ctx.journal()).schedules, close: async () => undefined };
  const stores = await openJournal(ctx.dir, { readOnly: false });
  return { store: stores.schedules, close: () => stores.close() };
}

const specOf = (s: StoredSchedule) => ("every" in s.spec ? `every ${s.spec.every} ms` : s.spec.cron);

function print(ctx: Context, rows: StoredSchedule[]): void {
  if (ctx.json) return ctx.printJson(rows);
  const { c } = ctx;
  if (rows.length === 0) {
    ctx.out(c.dim("no schedules"));
    return;
  }
  const lines = table([
    ["SCHEDULE", "LOGIC", "SPEC", "TIMEZONE", "NEXT TICK", "LAST TICK", "LAST EXECUTION", "STATE"].map((h) => c.dim(h)),
    ...rows.map((s) => [
      c.bold(printable(s.id)),
      printable(s.logicId),
      printable(specOf(s)),
      "cron" in s.spec ? printable(s.spec.timezone ?? "UTC") : c.dim("—"),
      s.paused ? c.dim(timestamp(s.nextAt ?? undefined)) : timestamp(s.nextAt ?? undefined),
      timestamp(s.lastTick?.at),
      s.lastTick ? printable(s.lastTick.executionId) : c.dim("—"),
      (s.paused ? c.yellow("paused") : c.green("active")) +
        (s.skipped || s.missed ? c.dim(` (${s.skipped} skipped, ${s.missed} missed)`) : ""),
    ]),
  ]);
  for (const l of lines) ctx.out(l);
}
