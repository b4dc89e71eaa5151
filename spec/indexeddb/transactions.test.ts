// How the adapter uses IndexedDB transactions: one strict transaction per journal write, relaxed
// durability only for blob touches, short read-only pages for list(), a persisted touch clock.
import { afterEach, describe, expect, it, vi } from "vitest";
import { utf8 } from "../../stores/bytes.js";
import { openFresh, started, step, transactionsDuring } from "./helpers.js";

afterEach(() => vi.restoreAllMocks());

describe("IndexedDB transactions", () => {
  it("appends in ONE strict readwrite transaction over records and the catalogue", async () => {
    const { stores } = await openFresh();
    const opened = await transactionsDuring(() => stores.events.append("e1", 0, [started(1), step(2), step(3)]));
    expect(opened).toEqual([{ stores: ["executions", "records"], mode: "readwrite", durability: "strict" }]);
    await stores.close();
  });

  it("archives and deletes histories in one strict transaction each", async () => {
    const { stores } = await openFresh();
    await stores.events.append("e1", 0, [started(1), step(2), step(3)]);
    await stores.events.putSnapshot("e1", { seq: 2, at: 1, state: {} });
    expect(await transactionsDuring(() => stores.events.archive("e1", 2))).toEqual([
      { stores: ["archives", "executions", "records"], mode: "readwrite", durability: "strict" },
    ]);
    expect(await transactionsDuring(() => stores.events.deleteHistory("e1"))).toEqual([
      { stores: ["archives", "executions", "records", "snapshots"], mode: "readwrite", durability: "strict" },
    ]);
    await stores.close();
  });

  it("uses relaxed durability only to touch a blob that is already stored", async () => {
    const { stores } = await openFresh();
    const first = await transactionsDuring(async () => void (await stores.content.put(utf8("x"))));
    expect(first.map((t) => t.durability)).toEqual(["relaxed", "strict"]);
    const again = await transactionsDuring(async () => void (await stores.content.put(utf8("x"))));
    expect(again).toEqual([{ stores: ["blobMeta", "meta"], mode: "readwrite", durability: "relaxed" }]);
    const others = await transactionsDuring(async () => {
      await stores.content.touchClock();
      await stores.content.deleteIfUntouchedSince("sha256:" + "0".repeat(64), 1);
      await stores.keys.getOrCreate("s");
      await stores.keys.destroy("s");
    });
    expect(others.every((t) => t.mode === "readwrite" && t.durability === "strict")).toBe(true);
    await stores.close();
  });

  it("lists blobs page by page, without holding a transaction across yields", async () => {
    const { stores } = await openFresh({ listPageSize: 2 });
    const addresses = [];
    for (let i = 0; i < 5; i++) addresses.push(await stores.content.put(utf8(`blob ${i}`)));
    const seen: string[] = [];
    const opened = await transactionsDuring(async () => {
      for await (const info of stores.content.list()) {
        seen.push(info.address);
        // The consumer writes between items; a transaction held across the yield would be dead by now.
        await stores.content.put(utf8(`written while listing ${seen.length}`));
      }
    });
    expect(seen.slice().sort()).toEqual(seen);
    for (const address of addresses) expect(seen).toContain(address);
    expect(new Set(seen).size).toBe(seen.length);
    const pages = opened.filter((t) => t.stores.join() === "blobMeta" && t.mode === "readonly");
    expect(pages.length).toBeGreaterThanOrEqual(3);
    await stores.close();
  });

  it("persists the touch clock: it keeps increasing across a reopen", async () => {
    const { stores, factory, name } = await openFresh();
    const t1 = await stores.content.touchClock();
    const t2 = await stores.content.touchClock();
    expect(t2).toBeGreaterThan(t1);
    await stores.close();
    const { stores: reopened } = await openFresh({ indexedDB: factory, name });
    const t3 = await reopened.content.touchClock();
    expect(t3).toBeGreaterThan(t2);
    const address = await reopened.content.put(utf8("after the cutoff"));
    const listed = [];
    for await (const info of reopened.content.list()) listed.push(info);
    expect(listed.find((i) => i.address === address)!.touchedAt).toBeGreaterThanOrEqual(t3);
    expect(await reopened.content.deleteIfUntouchedSince(address, t3)).toBe(false);
    await reopened.close();
  });

  it("gives two tabs racing for a subject's key the same key", async () => {
    const { stores, factory, name } = await openFresh();
    const { stores: otherTab } = await openFresh({ indexedDB: factory, name });
    const [a, b] = await Promise.all([stores.keys.getOrCreate("alice"), otherTab.keys.getOrCreate("alice")]);
    expect(a).toEqual(b);
    await Promise.all([stores.close(), otherTab.close()]);
  });
});
