// Resume reads the tail of a log, not the log: `events.read(id, fromSeq)` asks IndexedDB for the key
// range [id, fromSeq]..[id, Infinity] only, so what crosses from the database is O(tail).
import { afterEach, describe, expect, it, vi } from "vitest";
import { openFresh, started, step } from "./helpers.js";

afterEach(() => vi.restoreAllMocks());

describe("reading the tail of an IndexedDB log", () => {
  it("fetches only the records from fromSeq on, by key range", async () => {
    const { stores } = await openFresh();
    await stores.events.append("e1", 0, [started(1, "s"), ...Array.from({ length: 999 }, (_, i) => step(i + 2))]);
    // Another execution's records sort right after e1's: the range must stop at e1's last.
    await stores.events.append("e2", 0, [started(1, "s"), step(2)]);
    const getAll = vi.spyOn(IDBObjectStore.prototype, "getAll");
    const tail = await stores.events.read("e1", 990);
    expect(tail.map((r) => r.seq)).toEqual(Array.from({ length: 11 }, (_, i) => 990 + i));
    expect(getAll).toHaveBeenCalledTimes(1);
    const range = getAll.mock.calls[0]![0] as IDBKeyRange;
    expect([range.lower, range.upper]).toEqual([
      ["e1", 990],
      ["e1", Infinity],
    ]);
    await stores.close();
  });

  it("reads nothing past the head, and nothing for a NaN or future fromSeq", async () => {
    const { stores } = await openFresh();
    await stores.events.append("e1", 0, [started(1, "s"), step(2)]);
    expect(await stores.events.read("e1", 3)).toEqual([]);
    expect(await stores.events.read("e1", Number.NaN)).toEqual([]);
    expect((await stores.events.read("e1")).map((r) => r.seq)).toEqual([1, 2]);
    await stores.close();
  });
});
