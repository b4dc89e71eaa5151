// Schedules on the fleet (docs/scaling.md, "Schedules"): worker processes fire a 1-second schedule while one is
// SIGKILLed, and every tick starts exactly one execution: the tick ids are contiguous, none twice, all done.
// CI: two workers, one SIGKILLed after the second tick, seven ticks. The measure (a 3-worker fleet over 10
// minutes with SIGKILLs): `LOOMWORK_SOAK=1 npx vitest run spec/postgres/schedules.test.ts` (600 ticks, 3 workers,
// one SIGKILLed every 20 ticks and replaced), or LOOMWORK_SCHEDULE_TICKS, _WORKERS and _KILL_EVERY.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { postgresStores } from "../../adapters/postgres/index.js";
import { deleteSchedule, getSchedule, listSchedules, schedule } from "../../schedules.js";
import { EXECUTION_STARTED } from "../../stores/schema.js";
import { cases, LiveChild, SOAK } from "../reliability/support.js";
import { scheduleStoreConformance } from "../schedules/storeConformance.js";
import { stamped } from "./scheduleFleet.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

const WORKER_SCRIPT = fileURLToPath(new URL("./scheduleWorker.ts", import.meta.url));
const SECOND = 1_000;
const TICKS = cases("SCHEDULE_TICKS", 7, 600);
const WORKERS = cases("SCHEDULE_WORKERS", 2, 3);
// Ticks between two SIGKILLs (the first after the second tick); a killed worker is replaced while more kills are due.
const KILL_EVERY = cases("SCHEDULE_KILL_EVERY", 1_000_000, 20);

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

describe("schedules on the fleet", () => {
  it(
    `a 1-second schedule over ${WORKERS} workers, ${Math.ceil((TICKS - 2) / KILL_EVERY)} SIGKILLed: every tick of ${TICKS} exactly once`,
    async () => {
      const schema = freshSchema("sched");
      const stores = await postgresStores({ url: server.url, schema, pollMs: 100 });
      const app = createApp(defineConfig({ stores, effects: {} }));
      const workers: LiveChild[] = [];
      let generation = 0;
      const spawnWorker = async () => {
        const name = `w${++generation}`;
        const child = new LiveChild(
          spawn(
            process.execPath,
            ["--import", "tsx", WORKER_SCRIPT, JSON.stringify({ url: server.url, schema, name })],
            {
              stdio: ["ignore", "pipe", "pipe"],
            },
          ),
        );
        workers.push(child);
        await child.waitFor((out) => out.includes(`ready ${name}`), 60_000);
      };
      const ticks = async () =>
        (await app.executions()).map((e) => e.executionId).filter((id) => id.startsWith("sched:every-second:"));
      try {
        for (let n = 0; n < WORKERS; n++) await spawnWorker();
        // This app only stores the schedule (its stores are a fleet's): the workers fire it.
        const stored = await schedule(app, stamped, {
          id: "every-second",
          every: SECOND,
          overlap: "allow",
          catchUp: "all",
          input: { report: "daily" },
        });
        const WAIT = { timeout: 60_000, interval: 50 };
        const kills: number[] = []; // the tick count at each SIGKILL
        for (let killAt = 2; killAt < TICKS; killAt += KILL_EVERY) {
          await vi.waitFor(async () => expect((await ticks()).length).toBeGreaterThanOrEqual(killAt), WAIT);
          // The oldest live worker: the one most likely to hold the schedule's row and leases.
          const victim = workers.shift()!;
          victim.child.kill("SIGKILL");
          await victim.exited;
          kills.push((await ticks()).length);
          if (killAt + KILL_EVERY < TICKS) await spawnWorker();
        }
        await vi.waitFor(async () => expect((await ticks()).length).toBeGreaterThanOrEqual(TICKS), {
          ...WAIT,
          timeout: (TICKS + 60) * SECOND,
        });
        await deleteSchedule(app, "every-second");
        expect(await listSchedules(app)).toEqual([]);
        expect(await getSchedule(app, "every-second")).toBeUndefined();

        const ids = await ticks();
        const times = ids.map((id) => Date.parse(id.slice("sched:every-second:".length))).sort((a, b) => a - b);
        // Contiguous ticks from the first after the schedule was stored; an id is a primary key, and each started once.
        expect(times[0]).toBe(stored.nextAt);
        expect(times.map((t) => t - times[0]!)).toEqual(times.map((_, i) => i * SECOND));
        for (const id of ids) {
          const log = await app.log(id);
          expect(log.filter((r) => r.type === EXECUTION_STARTED)).toHaveLength(1);
          expect(log[0]).toMatchObject({ input: { report: "daily" } });
        }
        // Every tick's execution runs to its end on a worker (the killed one's are taken over after their lease).
        await vi.waitFor(
          async () =>
            expect((await app.executions()).filter((e) => e.status !== "done").map((e) => e.executionId)).toEqual([]),
          WAIT,
        );
        for (const id of ids) await expect(app.result(id)).resolves.toEqual(undefined);
        console.log(
          `schedules on the fleet: ${ids.length} ticks over ${WORKERS} workers, ${kills.length} SIGKILL(s) (at tick ${kills.join(", ")}), ${generation} worker processes; each tick started once, contiguous`,
        );
      } finally {
        for (const worker of workers) worker.child.kill("SIGTERM");
        await Promise.all(workers.map((w) => w.exited));
        await app.close();
        await stores.close();
        await dropSchema(server.url, schema);
      }
    },
    (SOAK ? 900 : 180) * SECOND + TICKS * 2 * SECOND,
  );
});

scheduleStoreConformance("postgres", async () => {
  const schema = freshSchema("schedstore");
  const stores = await postgresStores({ url: server.url, schema });
  return {
    store: stores.schedules,
    async close() {
      await stores.close();
      await dropSchema(server.url, schema);
    },
  };
});
