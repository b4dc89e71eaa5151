// Schedules on IndexedDB (fake-indexeddb): two tabs' apps over one database fire each tick once, and a reopened
// database keeps the schedule with its last tick.
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { describe, expect, it, vi } from "vitest";
import { simulatedClock } from "../../actors/clock.js";
import { indexedDbStores } from "../../adapters/indexeddb/index.js";
import { getSchedule, schedule } from "../../schedules.js";
import { appOn, iso, quick, tickIds, WAIT } from "./harness.js";

const T0 = Date.parse("2026-06-01T00:00:00.000Z");
const MINUTE = 60_000;

describe("schedules on IndexedDB", () => {
  it("two tabs fire each tick once; a reopened database keeps the schedule", async () => {
    const factory = new IDBFactory();
    const open = () => indexedDbStores({ name: "tabs", indexedDB: factory, IDBKeyRange, locks: null });
    const clock = simulatedClock(T0 + 1_000);
    const [storesA, storesB] = [await open(), await open()];
    const [tabA, tabB] = [appOn(storesA, clock), appOn(storesB, clock)];
    await schedule(tabA, quick, { id: "tabs", every: MINUTE });
    await schedule(tabB, quick, { id: "tabs", every: MINUTE });
    for (let i = 1; i <= 3; i++) {
      await vi.waitFor(() => expect(clock.pendingTimers()).toBe(2), WAIT);
      clock.advance(T0 + i * MINUTE - clock.now());
      await vi.waitFor(async () => expect(await tickIds(tabA, "tabs")).toHaveLength(i), WAIT);
    }
    await vi.waitFor(() => expect(clock.pendingTimers()).toBe(2), WAIT);
    expect(await tickIds(tabB, "tabs")).toEqual([1, 2, 3].map((i) => `sched:tabs:${iso(T0 + i * MINUTE)}`));
    await tabA.close();
    await tabB.close();
    await storesA.close();
    await storesB.close();

    const stores = await open();
    const app = appOn(stores, clock);
    expect(await getSchedule(app, "tabs")).toMatchObject({
      lastTick: { at: T0 + 3 * MINUTE },
      nextAt: T0 + 4 * MINUTE,
    });
    await app.close();
    await stores.close();
  });
});
