// What every ScheduleStore keeps (stores/types.ts): plain JSON round trips, ids in order, and every write a
// compare-and-set on the revision, so two runners deciding one tick write its outcome once.
import { describe, expect, it } from "vitest";
import type { ScheduleStore, StoredSchedule } from "../../stores/types.js";

export const sample = (id: string, over: Partial<StoredSchedule> = {}): StoredSchedule => ({
  id,
  logicId: "report",
  spec: { cron: "0 3 * * *", timezone: "Europe/Paris" },
  input: { scope: "all", nested: [1, { b: null }] },
  overlap: "skip",
  catchUp: "latest",
  paused: false,
  createdAt: 1_000,
  nextAt: 2_000,
  skipped: 0,
  missed: 0,
  revision: 1,
  ...over,
});

/** The ScheduleStore conformance cases over stores `open` makes (fresh ones each call), closed by `close`. */
export function scheduleStoreConformance(
  name: string,
  open: () => Promise<{ store: ScheduleStore; close(): Promise<void> }>,
): void {
  describe(`ScheduleStore conformance: ${name}`, () => {
    it("creates only when absent, replaces only at the revision read, and deletes", async () => {
      const { store, close } = await open();
      try {
        expect(await store.list()).toEqual([]);
        expect(await store.get("b")).toBeUndefined();
        expect(await store.put(sample("b"), 0)).toBe(true);
        expect(await store.put(sample("b", { logicId: "other" }), 0)).toBe(false);
        expect(await store.put(sample("a", { spec: { every: 60_000 }, nextAt: null }), 0)).toBe(true);
        expect(await store.get("b")).toEqual(sample("b"));
        expect((await store.list()).map((s) => s.id)).toEqual(["a", "b"]);
        expect(await store.get("a")).toEqual(sample("a", { spec: { every: 60_000 }, nextAt: null }));

        // Two writers read revision 1: one write wins, the other changes nothing.
        const [one, two] = await Promise.all([
          store.put(sample("b", { nextAt: 3_000, lastTick: { at: 2_000, executionId: "sched:b:x" } }), 1),
          store.put(sample("b", { nextAt: 4_000 }), 1),
        ]);
        expect([one, two].filter(Boolean)).toHaveLength(1);
        const won = (await store.get("b"))!;
        expect(won.revision).toBe(2);
        expect(won.nextAt).toBe(one ? 3_000 : 4_000);
        // The stored revision is the expected one plus one, whatever the value says.
        expect(await store.put(sample("b", { paused: true, revision: 99 }), 2)).toBe(true);
        expect(await store.get("b")).toMatchObject({ paused: true, revision: 3 });
        expect(await store.put(sample("b"), 2)).toBe(false);

        expect(await store.delete("b")).toBe(true);
        expect(await store.delete("b")).toBe(false);
        expect((await store.list()).map((s) => s.id)).toEqual(["a"]);
        await expect(store.get("\uD800")).rejects.toMatchObject({ name: "MalformedIdError", what: "schedule id" });
      } finally {
        await close();
      }
    });
  });
}
