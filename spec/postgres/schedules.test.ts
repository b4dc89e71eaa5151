// Schedules on the fleet (docs/scaling.md, "Schedules"): two worker processes fire a 1-second schedule, one is
// SIGKILLed midway, and every tick starts exactly one execution: the tick ids are contiguous, none twice, all done.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { postgresStores } from "../../adapters/postgres/index.js";
import { deleteSchedule, getSchedule, listSchedules, schedule } from "../../schedules.js";
import { EXECUTION_STARTED } from "../../stores/schema.js";
import { LiveChild } from "../reliability/support.js";
import { stamped } from "./scheduleFleet.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

const WORKER_SCRIPT = fileURLToPath(new URL("./scheduleWorker.ts", import.meta.url));
const SECOND = 1_000;

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

describe("schedules on the fleet", () => {
  it("a 1-second schedule over two workers, one SIGKILLed midway: every tick exactly once", async () => {
    const schema = freshSchema("sched");
    const stores = await postgresStores({ url: server.url, schema, pollMs: 100 });
    const app = createApp(defineConfig({ stores, effects: {} }));
    const workers: LiveChild[] = [];
    const spawnWorker = async (name: string) => {
      const child = new LiveChild(
        spawn(process.execPath, ["--import", "tsx", WORKER_SCRIPT, JSON.stringify({ url: server.url, schema, name })], {
          stdio: ["ignore", "pipe", "pipe"],
        }),
      );
      workers.push(child);
      await child.waitFor((out) => out.includes(`ready ${name}`), 60_000);
    };
    const ticks = async () =>
      (await app.executions()).map((e) => e.executionId).filter((id) => id.startsWith("sched:every-second:"));
    try {
      await spawnWorker("w1");
      await spawnWorker("w2");
      // This app only stores the schedule (its stores are a fleet's): the workers fire it.
      const stored = await schedule(app, stamped, {
        id: "every-second",
        every: SECOND,
        overlap: "allow",
        catchUp: "all",
        input: { report: "daily" },
      });
      const WAIT = { timeout: 60_000, interval: 50 };
      await vi.waitFor(async () => expect((await ticks()).length).toBeGreaterThanOrEqual(2), WAIT);
      workers[0]!.child.kill("SIGKILL");
      await workers[0]!.exited;
      const atKill = (await ticks()).length;
      // About five seconds more on the survivor.
      await vi.waitFor(async () => expect((await ticks()).length).toBeGreaterThanOrEqual(atKill + 5), WAIT);
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
      console.log(`schedules on the fleet: ${ids.length} ticks (${atKill} before the SIGKILL), each started once`);
    } finally {
      for (const worker of workers) worker.child.kill("SIGTERM");
      await Promise.all(workers.map((w) => w.exited));
      await app.close();
      await stores.close();
      await dropSchema(server.url, schema);
    }
  }, 180_000);
});
