// Durable schedules on memory and fs stores with a simulated clock (loomwork/schedules, docs/scaling.md "Schedules"):
// each tick starts one execution whose id names the tick, once; catch-up after a downtime; overlap; pause, resume,
// delete; a restart keeps the schedule; two apps racing on one tick start it once.
import { afterAll, describe, expect, it, vi } from "vitest";
import { createApp } from "../../actors/app.js";
import { simulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import { memoryStores } from "../../stores/memory.js";
import { fsStores } from "../../adapters/fs/index.js";
import {
  deleteSchedule,
  getSchedule,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  runSchedules,
  schedule,
} from "../../schedules.js";
import { tempDirs } from "../support/tempDirs.js";
import { advanceTo, appOn, armed, iso, quick, slow, tickIds, WAIT } from "./harness.js";

const { tempDir, removeTempDirs } = tempDirs("schedules");
afterAll(removeTempDirs);

const T0 = Date.parse("2026-06-01T00:00:00.000Z");
const MINUTE = 60_000;

describe("schedules on one app", () => {
  it("starts one execution per tick, its id derived from the schedule and the tick", async () => {
    const clock = simulatedClock(T0 + 1_000);
    const app = appOn(memoryStores(), clock);
    const stored = await schedule(app, quick, { id: "minutely", every: MINUTE, input: { n: 1 } });
    expect(stored).toMatchObject({ id: "minutely", logicId: "quick", spec: { every: MINUTE }, nextAt: T0 + MINUTE });
    for (let i = 1; i <= 3; i++) {
      await advanceTo(clock, T0 + i * MINUTE);
      await vi.waitFor(async () => expect(await tickIds(app, "minutely")).toHaveLength(i), WAIT);
    }
    // Moving within a tick starts nothing more: the witness is the runner's next look, armed again.
    await advanceTo(clock, T0 + 3 * MINUTE + 30_000);
    await armed(clock);
    expect(await tickIds(app, "minutely")).toEqual([1, 2, 3].map((i) => `sched:minutely:${iso(T0 + i * MINUTE)}`));
    const log = await app.log(`sched:minutely:${iso(T0 + MINUTE)}`);
    expect(log[0]).toMatchObject({ type: "loom.execution.started", input: { n: 1 } });
    expect(await getSchedule(app, "minutely")).toMatchObject({
      nextAt: T0 + 4 * MINUTE,
      lastTick: { at: T0 + 3 * MINUTE, executionId: `sched:minutely:${iso(T0 + 3 * MINUTE)}` },
      skipped: 0,
      missed: 0,
    });
    await app.close();
  });

  it("follows Europe/Paris across spring-forward and fall-back: a skipped 02:30 fires at 03:00, a repeated one once", async () => {
    for (const [from, expected] of [
      ["2026-03-28T00:00:00Z", ["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"]],
      ["2026-10-24T00:00:00Z", ["2026-10-24T00:30:00.000Z", "2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"]],
    ] as const) {
      const clock = simulatedClock(Date.parse(from));
      const app = appOn(memoryStores(), clock);
      await schedule(app, quick, { id: "night", cron: "30 2 * * *", timezone: "Europe/Paris" });
      for (let i = 1; i <= expected.length; i++) {
        const { nextAt } = (await getSchedule(app, "night"))!;
        await advanceTo(clock, nextAt!);
        await vi.waitFor(async () => expect(await tickIds(app, "night")).toHaveLength(i), WAIT);
      }
      expect(await tickIds(app, "night")).toEqual(expected.map((at) => `sched:night:${at}`));
      await app.close();
    }
  });

  it("an hourly cron in Europe/Paris fires every real hour on the fall-back night, once each", async () => {
    const clock = simulatedClock(Date.parse("2026-10-24T23:30:00Z"));
    const app = appOn(memoryStores(), clock);
    await schedule(app, quick, { id: "hourly", cron: "0 * * * *", timezone: "Europe/Paris" });
    for (let i = 1; i <= 4; i++) {
      const { nextAt } = (await getSchedule(app, "hourly"))!;
      await advanceTo(clock, nextAt!);
      await vi.waitFor(async () => expect(await tickIds(app, "hourly")).toHaveLength(i), WAIT);
    }
    // 02:00 CEST (00:00Z), 02:00 CET (01:00Z) after 03:00 CEST became 02:00 CET: both are hours of the wall clock.
    expect(await tickIds(app, "hourly")).toEqual(
      ["00:00", "01:00", "02:00", "03:00"].map((t) => `sched:hourly:2026-10-25T${t}:00.000Z`),
    );
    await app.close();
  });

  it("after a downtime fires only the latest missed tick by default, each with catchUp all, none with skip", async () => {
    const outcomes: Record<string, { ids: number; missed: number }> = {};
    for (const catchUp of ["latest", "all", "skip"] as const) {
      const stores = memoryStores();
      const clock = simulatedClock(T0 + 1_000);
      const app = appOn(stores, clock);
      await schedule(app, quick, { id: "s", every: MINUTE, catchUp });
      await app.close();
      // An hour down; the app opens half a minute after a tick.
      clock.advance(60 * MINUTE + 29_000);
      const again = appOn(stores, clock);
      runSchedules(again);
      await armed(clock);
      const ids = await tickIds(again, "s");
      outcomes[catchUp] = { ids: ids.length, missed: (await getSchedule(again, "s"))!.missed };
      if (catchUp === "latest") expect(ids).toEqual([`sched:s:${iso(T0 + 60 * MINUTE)}`]);
      if (catchUp === "all") expect(ids.at(-1)).toBe(`sched:s:${iso(T0 + 60 * MINUTE)}`);
      // On time again from now on, whatever the policy.
      await advanceTo(clock, T0 + 61 * MINUTE);
      await vi.waitFor(
        async () => expect(await tickIds(again, "s")).toContain(`sched:s:${iso(T0 + 61 * MINUTE)}`),
        WAIT,
      );
      await again.close();
    }
    expect(outcomes).toEqual({
      latest: { ids: 1, missed: 59 },
      all: { ids: 60, missed: 0 },
      skip: { ids: 0, missed: 60 },
    });
  });

  it("skips a tick whose previous execution still runs (recorded), and starts it with overlap allow", async () => {
    const clock = simulatedClock(T0 + 1_000);
    const app = appOn(memoryStores(), clock);
    await schedule(app, slow, { id: "a-skip", every: MINUTE });
    await schedule(app, slow, { id: "b-allow", every: MINUTE, overlap: "allow" });
    await advanceTo(clock, T0 + MINUTE);
    await vi.waitFor(async () => expect(await app.executions()).toHaveLength(2), WAIT);
    await advanceTo(clock, T0 + 2 * MINUTE);
    await vi.waitFor(async () => expect(await tickIds(app, "b-allow")).toHaveLength(2), WAIT);
    await armed(clock);
    expect(await tickIds(app, "a-skip")).toEqual([`sched:a-skip:${iso(T0 + MINUTE)}`]);
    expect(await getSchedule(app, "a-skip")).toMatchObject({ skipped: 1, lastSkippedAt: T0 + 2 * MINUTE });
    // The first ends: the next tick starts.
    await (await app.resume(`sched:a-skip:${iso(T0 + MINUTE)}`)).sendAsync({ type: "DONE" });
    await advanceTo(clock, T0 + 3 * MINUTE);
    await vi.waitFor(async () => expect(await tickIds(app, "a-skip")).toHaveLength(2), WAIT);
    expect((await tickIds(app, "a-skip"))[1]).toBe(`sched:a-skip:${iso(T0 + 3 * MINUTE)}`);
    await app.close();
  });

  it("pauses, resumes and deletes: nothing fires while paused or once deleted", async () => {
    const clock = simulatedClock(T0 + 1_000);
    const app = appOn(memoryStores(), clock);
    await schedule(app, quick, { id: "a-paused", every: MINUTE });
    await schedule(app, quick, { id: "b-deleted", every: MINUTE });
    // The witness fires at every tick: once it has, the runner's look at that tick covered the others too (by id).
    await schedule(app, quick, { id: "z-witness", every: MINUTE });
    expect(await pauseSchedule(app, "a-paused")).toMatchObject({ paused: true });
    await deleteSchedule(app, "b-deleted");
    await advanceTo(clock, T0 + MINUTE);
    await vi.waitFor(async () => expect(await tickIds(app, "z-witness")).toHaveLength(1), WAIT);
    await advanceTo(clock, T0 + 2 * MINUTE);
    await vi.waitFor(async () => expect(await tickIds(app, "z-witness")).toHaveLength(2), WAIT);
    expect(await tickIds(app, "a-paused")).toEqual([]);
    expect(await tickIds(app, "b-deleted")).toEqual([]);
    expect((await listSchedules(app)).map((s) => [s.id, s.paused])).toEqual([
      ["a-paused", true],
      ["z-witness", false],
    ]);
    // Resumed within the tick's on-time window: the tick due while paused fires now, once.
    await resumeSchedule(app, "a-paused");
    await vi.waitFor(async () => expect(await tickIds(app, "a-paused")).toHaveLength(1), WAIT);
    expect(await tickIds(app, "a-paused")).toEqual([`sched:a-paused:${iso(T0 + 2 * MINUTE)}`]);
    await expect(deleteSchedule(app, "b-deleted")).rejects.toMatchObject({
      name: "UnknownScheduleError",
      scheduleId: "b-deleted",
    });
    await app.close();
  });

  it("two apps over the same stores racing on each tick start it once", async () => {
    const stores = memoryStores();
    const clock = simulatedClock(T0 + 1_000);
    const one = appOn(stores, clock);
    const two = appOn(stores, clock);
    await schedule(one, quick, { id: "raced", every: MINUTE });
    await schedule(two, quick, { id: "raced", every: MINUTE });
    for (let i = 1; i <= 5; i++) {
      await vi.waitFor(() => expect(clock.pendingTimers()).toBe(2), WAIT);
      clock.advance(T0 + i * MINUTE - clock.now());
      await vi.waitFor(async () => expect(await tickIds(one, "raced")).toHaveLength(i), WAIT);
    }
    await vi.waitFor(() => expect(clock.pendingTimers()).toBe(2), WAIT);
    expect(await tickIds(one, "raced")).toEqual([1, 2, 3, 4, 5].map((i) => `sched:raced:${iso(T0 + i * MINUTE)}`));
    await one.close();
    await two.close();
  });
  it("a look that fails (the store unreachable, a database restarting) is tried again at the next poll: no tick is lost", async () => {
    const stores = memoryStores();
    const inner = stores.schedules!;
    let down = false;
    const schedules = Object.assign(Object.create(inner) as typeof inner, {
      list: () => (down ? Promise.reject(new Error("connection terminated")) : inner.list()),
    });
    const clock = simulatedClock(T0 + 1_000);
    const warnings: string[] = [];
    const app = createApp(
      defineConfig({
        stores: { ...stores, schedules },
        effects: {},
        clock,
        logics: [quick],
        observability: { onWarn: (w) => warnings.push(w.code) },
      }),
    );
    await schedule(app, quick, { id: "minutely", every: MINUTE, catchUp: "all" });
    await advanceTo(clock, T0 + MINUTE);
    await vi.waitFor(async () => expect(await tickIds(app, "minutely")).toHaveLength(1), WAIT);
    down = true;
    await advanceTo(clock, T0 + 2 * MINUTE);
    await vi.waitFor(() => expect(warnings).toContain("LOOM_SCHEDULE_NOT_FIRED"), WAIT);
    down = false;
    // The runner looks again a poll later (a minute on one app), and fires the tick it could not, then the next.
    await advanceTo(clock, T0 + 3 * MINUTE);
    await vi.waitFor(async () => expect(await tickIds(app, "minutely")).toHaveLength(3), WAIT);
    expect(await tickIds(app, "minutely")).toEqual([1, 2, 3].map((i) => `sched:minutely:${iso(T0 + i * MINUTE)}`));
    await app.close();
  });
});

describe("a schedule survives a restart", () => {
  it("on fs: a new process's app keeps the schedule, its last tick, and fires the next tick once", async () => {
    const dir = await tempDir("restart");
    const clock = simulatedClock(T0 + 1_000);
    let stores = await fsStores({ dir });
    let app = appOn(stores, clock);
    await schedule(app, quick, { id: "kept", every: MINUTE, input: { to: "ops" } });
    await advanceTo(clock, T0 + MINUTE);
    await vi.waitFor(async () => expect(await tickIds(app, "kept")).toHaveLength(1), WAIT);
    await armed(clock);
    await app.close();
    await stores.close();

    stores = await fsStores({ dir });
    app = appOn(stores, clock);
    // Declared again at boot with the same definition: a no-op that keeps the stored state.
    const again = await schedule(app, quick, { id: "kept", every: MINUTE, input: { to: "ops" } });
    expect(again).toMatchObject({ lastTick: { at: T0 + MINUTE }, nextAt: T0 + 2 * MINUTE, createdAt: T0 + 1_000 });
    await advanceTo(clock, T0 + 2 * MINUTE);
    await vi.waitFor(async () => expect(await tickIds(app, "kept")).toHaveLength(2), WAIT);
    await armed(clock);
    expect(await tickIds(app, "kept")).toEqual([1, 2].map((i) => `sched:kept:${iso(T0 + i * MINUTE)}`));
    await app.close();
    await stores.close();
  });
});

describe("bad input: a typed error naming the value, nothing stored", () => {
  it("refuses each and stores nothing", async () => {
    const app = appOn(memoryStores(), simulatedClock(T0));
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [
        { id: "c", cron: "61 * * * *" },
        { name: "InvalidCronError", cron: "61 * * * *", scheduleId: "c" },
      ],
      [
        { id: "c", cron: "every day" },
        { name: "InvalidCronError", cron: "every day" },
      ],
      [
        { id: "c", cron: "0 0 30 2 *" },
        { name: "InvalidCronError", cron: "0 0 30 2 *" },
      ],
      [
        { id: "t", cron: "0 3 * * *", timezone: "Mars/Olympus" },
        { name: "UnknownTimezoneError", timezone: "Mars/Olympus" },
      ],
      [
        { id: "e", every: 0 },
        { name: "ConfigError", path: "schedule.every" },
      ],
      [
        { id: "e", every: 1.5 },
        { name: "ConfigError", path: "schedule.every" },
      ],
      [
        { id: "e", every: "60000" },
        { name: "ConfigError", path: "schedule.every" },
      ],
      [
        { id: "b", every: 1000, cron: "* * * * *" },
        { name: "ConfigError", path: "schedule.every" },
      ],
      [{ id: "n" }, { name: "ConfigError", path: "schedule.cron" }],
      [
        { id: "", every: 1000 },
        { name: "ConfigError", path: "schedule.id" },
      ],
      [
        { id: "o", every: 1000, overlap: "buffer" },
        { name: "ConfigError", path: "schedule.overlap" },
      ],
      [
        { id: "k", every: 1000, catchUp: "some" },
        { name: "ConfigError", path: "schedule.catchUp" },
      ],
      [
        { id: "x", every: 1000, everyMs: 5 },
        { name: "ConfigError", path: "schedule.everyMs" },
      ],
      [
        { id: "i", every: 1000, input: { at: new Map() } },
        { name: "ConfigError", path: "start.input" },
      ],
    ];
    for (const [options, expected] of cases) {
      const refused = await schedule(app, quick, options as never).catch((error: unknown) => error);
      expect(refused, JSON.stringify(options)).toMatchObject(expected);
      expect(String((refused as Error).message)).toContain(String(expected.cron ?? expected.timezone ?? expected.path));
    }
    await expect(schedule(app, "no-such-logic", { id: "u", every: 1000 })).rejects.toMatchObject({
      name: "ConfigError",
      message: expect.stringContaining('"no-such-logic"') as unknown,
    });
    expect(await listSchedules(app)).toEqual([]);
    await app.close();
  });

  it("an id used twice: the same definition is a no-op, another one a ScheduleConflictError unless replace", async () => {
    const clock = simulatedClock(T0 + 1_000);
    const app = appOn(memoryStores(), clock);
    const first = await schedule(app, quick, { id: "twice", every: MINUTE, input: { a: 1, b: 2 } });
    expect(await schedule(app, quick, { id: "twice", every: MINUTE, input: { b: 2, a: 1 } })).toEqual(first);
    await expect(schedule(app, quick, { id: "twice", every: 2 * MINUTE })).rejects.toMatchObject({
      name: "ScheduleConflictError",
      scheduleId: "twice",
      field: "spec",
    });
    await expect(schedule(app, slow, { id: "twice", every: MINUTE, input: { a: 1, b: 2 } })).rejects.toMatchObject({
      field: "logic",
    });
    expect(await listSchedules(app)).toEqual([first]);
    const replaced = await schedule(app, quick, { id: "twice", cron: "0 3 * * *", timezone: "UTC", replace: true });
    expect(replaced).toMatchObject({
      spec: { cron: "0 3 * * *", timezone: "UTC" },
      input: null,
      nextAt: Date.parse("2026-06-01T03:00:00Z"),
    });
    await app.close();
  });
});
