// What a resume reads from IndexedDB: the snapshot, the head it is checked against and the tail after it,
// in one read-only transaction. getSnapshot reads the head and the tail along; the head() and
// read(id, seq + 1) a resume makes next are served from that, never after a write through the store,
// never after the next task (when another tab's write could have reached the page), and the tail once.
import { afterEach, describe, expect, it, vi } from "vitest";
import { openFresh, started, step, transactionsDuring } from "./helpers.js";

afterEach(() => vi.restoreAllMocks());

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));
const seqs = (records: { seq: number }[]) => records.map((r) => r.seq);

async function withSnapshot() {
  const opened = await openFresh({ locks: null });
  await opened.stores.events.append("e", 0, [started(1), step(2), step(3), step(4), step(5)]);
  await opened.stores.events.putSnapshot("e", { seq: 3, at: 0, state: { n: 3 } });
  await opened.stores.close();
  const { stores } = await openFresh({ indexedDB: opened.factory, name: opened.name, locks: null });
  return { ...opened, stores };
}

describe("IndexedDB: the reads of a resume", () => {
  it("reads the snapshot, the head and the tail in ONE read-only transaction", async () => {
    const { stores } = await withSnapshot();
    let got: { seq: number | undefined; head: number; tail: number[] } | undefined;
    const opened = await transactionsDuring(async () => {
      const snapshot = await stores.events.getSnapshot("e");
      const head = await stores.events.head("e");
      const tail = await stores.events.read("e", snapshot!.seq + 1);
      got = { seq: snapshot?.seq, head, tail: seqs(tail) };
    });
    expect(got).toEqual({ seq: 3, head: 5, tail: [4, 5] });
    expect(opened).toEqual([
      { stores: ["executions", "records", "snapshots"], mode: "readonly", durability: undefined },
    ]);
    await stores.close();
  });

  it("serves the tail once, and only for the range after the snapshot of that execution", async () => {
    const { stores } = await withSnapshot();
    await stores.events.append("other", 0, [started(1), step(2)]);
    await stores.events.getSnapshot("e");
    const elsewhere = await transactionsDuring(async () => {
      expect(seqs(await stores.events.read("e", 2))).toEqual([2, 3, 4, 5]);
      expect(seqs(await stores.events.read("other", 4))).toEqual([]);
      expect(await stores.events.head("other")).toBe(2);
    });
    expect(elsewhere).toHaveLength(3);
    expect(seqs(await stores.events.read("e", 4))).toEqual([4, 5]);
    const again = await transactionsDuring(async () => expect(seqs(await stores.events.read("e", 4))).toEqual([4, 5]));
    expect(again).toHaveLength(1);
    await stores.close();
  });

  it("never serves what it read along after a write through the store", async () => {
    const { stores } = await withSnapshot();
    await stores.events.getSnapshot("e");
    await stores.events.append("e", 5, [step(6)]);
    expect(await stores.events.head("e")).toBe(6);
    expect(seqs(await stores.events.read("e", 4))).toEqual([4, 5, 6]);
    await stores.close();
  });

  it("never serves it after the next task: another tab's append is seen", async () => {
    const { stores, factory, name } = await withSnapshot();
    const { stores: otherTab } = await openFresh({ indexedDB: factory, name, locks: null });
    await stores.events.getSnapshot("e");
    await otherTab.events.append("e", 5, [step(6)]);
    await nextTask();
    expect(await stores.events.head("e")).toBe(6);
    expect(seqs(await stores.events.read("e", 4))).toEqual([4, 5, 6]);
    await Promise.all([stores.close(), otherTab.close()]);
  });

  it("reads no tail when there is no snapshot, and the head as usual", async () => {
    const { stores } = await openFresh({ locks: null });
    await stores.events.append("e", 0, [started(1), step(2)]);
    expect(await stores.events.getSnapshot("e")).toBeUndefined();
    expect(await stores.events.getSnapshot("missing")).toBeUndefined();
    expect(await stores.events.head("e")).toBe(2);
    expect(seqs(await stores.events.read("e"))).toEqual([1, 2]);
    await stores.close();
  });
});
