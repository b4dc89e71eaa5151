// The Dexie view of the catalogue: live lists for pages, always equal to what the journal says.
import { describe, expect, it, vi } from "vitest";
import { indexedDbStores, executionsLiveQuery, watchExecutions } from "../../adapters/indexeddb/index.js";
import { catalogueChangeParts, DEXIE_STORAGE_MUTATED_CHANNEL } from "../../adapters/indexeddb/catalogueChanges.js";
import { memoryStores } from "../../stores/memory.js";
import { EXECUTION_ENDED } from "../../stores/schema.js";
import type { ExecutionInfo } from "../../stores/types.js";
import { eventually, openFresh, started, step } from "./helpers.js";

const ids = (list: ExecutionInfo[]) => list.map((e) => e.executionId);

describe("the IndexedDB catalogue view", () => {
  it("emits the updated list after each append, end, archive and delete", async () => {
    const { stores } = await openFresh();
    const lists: ExecutionInfo[][] = [];
    const subscription = executionsLiveQuery(stores).subscribe({ next: (list) => lists.push(list) });
    await eventually(lists, (list) => list.length === 0);

    await stores.events.append("b", 0, [started(1, "alice")]);
    await eventually(lists, (list) => ids(list).join() === "b");
    await stores.events.append("a", 0, [started(1, "bob"), step(2)]);
    const both = await eventually(lists, (list) => ids(list).join() === "a,b");
    expect(both[0]).toMatchObject({ executionId: "a", subject: "bob", status: "running", head: 2, startedAt: 1001 });

    await stores.events.append("b", 1, [{ seq: 2, at: 5_000, type: EXECUTION_ENDED, status: "done" }]);
    const ended = await eventually(lists, (list) => list[1]?.status === "done");
    expect(ended[1]).toMatchObject({ executionId: "b", endedAt: 5_000, head: 2 });
    // The view equals the journal's own catalogue, field for field.
    expect(ended).toEqual(await stores.events.listExecutions());

    await stores.events.deleteHistory("a");
    await eventually(lists, (list) => ids(list).join() === "b");
    subscription.unsubscribe();
    await stores.close();
  });

  it("filters by subject and status through the catalogue's indexes", async () => {
    const { stores } = await openFresh();
    await stores.events.append("x1", 0, [started(1, "alice")]);
    await stores.events.append("x2", 0, [started(1, "bob")]);
    await stores.events.append("x3", 0, [
      started(1, "alice"),
      { seq: 2, at: 9, type: EXECUTION_ENDED, status: "error" },
    ]);
    const alice: ExecutionInfo[][] = [];
    const failed: ExecutionInfo[][] = [];
    const aliceRunning: ExecutionInfo[][] = [];
    const stops = [
      watchExecutions(stores, (list) => alice.push(list), { query: { subject: "alice" } }),
      watchExecutions(stores, (list) => failed.push(list), { query: { status: "error" } }),
      watchExecutions(stores, (list) => aliceRunning.push(list), { query: { subject: "alice", status: "running" } }),
    ];
    expect(ids(await eventually(alice, (l) => l.length === 2))).toEqual(["x1", "x3"]);
    expect(ids(await eventually(failed, (l) => l.length === 1))).toEqual(["x3"]);
    expect(ids(await eventually(aliceRunning, (l) => l.length === 1))).toEqual(["x1"]);
    await stores.events.append("x0", 0, [started(1, "alice")]);
    expect(ids(await eventually(alice, (l) => l.length === 3))).toEqual(["x0", "x1", "x3"]);
    for (const stop of stops) stop();
    await stores.close();
  });

  it("watches by database name, even before the database exists, on the global indexedDB", async () => {
    const name = `by-name-${Date.now()}`;
    const lists: ExecutionInfo[][] = [];
    const errors: unknown[] = [];
    const stop = watchExecutions(name, (list) => lists.push(list), { onError: (e) => errors.push(e) });
    await eventually(lists, (list) => list.length === 0);
    // No injected factory: the stores open through idb's openDB on globalThis.indexedDB.
    const stores = await indexedDbStores({ name });
    await stores.events.append("e1", 0, [started(1, "s")]);
    await eventually(lists, (list) => ids(list).join() === "e1");
    expect(errors).toEqual([]);
    stop();
    await stores.close();
  });

  it("re-runs on writes by other stores on the same database (another tab's writer), one message per committed write", async () => {
    const { stores, factory, name } = await openFresh();
    const writer = (await openFresh({ indexedDB: factory, name })).stores;
    // Dexie's cross-context channel, as another tab's Dexie hears it.
    const heard: unknown[] = [];
    const other = new BroadcastChannel(DEXIE_STORAGE_MUTATED_CHANNEL);
    other.onmessage = (event: MessageEvent) => heard.push(event.data);
    const lists: ExecutionInfo[][] = [];
    const stop = watchExecutions(stores, (list) => lists.push(list));
    await eventually(lists, (list) => list.length === 0);
    await writer.events.append("w1", 0, [started(1, "s")]);
    await eventually(lists, (list) => ids(list).join() === "w1");
    // A refused append (stale seq) commits nothing and announces nothing.
    await expect(writer.events.append("w1", 0, [started(1, "s")])).rejects.toThrow();
    await writer.events.append("w1", 1, [step(2)]);
    await eventually(lists, (list) => list[0]?.head === 2);
    await vi.waitFor(() => expect(heard).toHaveLength(2));
    expect(heard[0]).toEqual(catalogueChangeParts(name));
    other.close();
    stop();
    await Promise.all([stores.close(), writer.close()]);
  });

  it("opens the view on first use, and never on stores already closed (it reports the closing instead)", async () => {
    const { stores } = await openFresh();
    await stores.events.append("c1", 0, [started(1, "s")]);
    await stores.close();
    const errors: unknown[] = [];
    const lists: ExecutionInfo[][] = [];
    const stop = watchExecutions(stores, (list) => lists.push(list), { onError: (error) => errors.push(error) });
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(errors[0]).toMatchObject({ name: "IndexedDbConnectionError", reason: "closed" });
    expect(lists).toEqual([]);
    stop();
  });

  it("refuses stores it did not open, with a message that says what to pass", () => {
    expect(() => executionsLiveQuery(memoryStores())).toThrow(
      /not opened by indexedDbStores\(\); pass a database name/,
    );
  });
});
