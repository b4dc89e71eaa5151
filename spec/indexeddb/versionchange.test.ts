// Another tab upgrading or deleting the database must never hang on this tab's connections: a
// versionchange closes them (the idb journal connection and the Dexie catalogue view alike).
import { IDBKeyRange } from "fake-indexeddb";
import { describe, expect, it } from "vitest";
import { IndexedDbConnectionError, SCHEMA_VERSION, watchExecutions } from "../../adapters/indexeddb/index.js";
import type { ExecutionInfo } from "../../stores/types.js";
import { eventually, openFresh, settle, started, step } from "./helpers.js";

describe("IndexedDB versionchange", () => {
  it("closes this connection so a newer version's upgrade proceeds, then refuses clearly", async () => {
    const { stores, factory, name } = await openFresh();
    await stores.events.append("e1", 0, [started(1)]);
    const lists: ExecutionInfo[][] = [];
    const stop = watchExecutions(stores, (list) => lists.push(list));
    await eventually(lists, (list) => list.length === 1);

    let blocked = false;
    const upgraded = await settle(factory.open(name, SCHEMA_VERSION + 1), () => (blocked = true));
    expect(blocked).toBe(false);
    expect(upgraded.version).toBe(SCHEMA_VERSION + 1);
    upgraded.close();

    const error = await stores.events.append("e1", 1, [step(2)]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IndexedDbConnectionError);
    expect(error).toMatchObject({ reason: "newer-version", database: name, code: "LOOM_IDB_CONNECTION" });
    expect((error as Error).message).toMatch(/upgraded by a newer loomwork in another tab.*Reload the page/);
    stop();
    await stores.close();
  });

  it("reopens transparently when the other connection's upgrade did not happen", async () => {
    const { stores, factory, name } = await openFresh();
    await stores.events.append("e1", 0, [started(1)]);
    const request = factory.open(name, SCHEMA_VERSION + 1);
    request.onupgradeneeded = () => request.transaction!.abort();
    await expect(settle(request)).rejects.toMatchObject({ name: "AbortError" });
    // The versionchange closed our connection; the database is still at our version, so we reopen.
    await stores.events.append("e1", 1, [step(2)]);
    expect((await stores.events.read("e1")).map((r) => r.seq)).toEqual([1, 2]);
    await stores.close();
  });

  it("lets another tab delete the database and refuses to recreate it behind the app's back", async () => {
    const { stores, factory, name } = await openFresh();
    await stores.content.put(new Uint8Array([1, 2, 3]));
    let blocked = false;
    await settle(factory.deleteDatabase(name), () => (blocked = true));
    expect(blocked).toBe(false);
    await expect(stores.keys.get("s")).rejects.toMatchObject({ reason: "deleted" });
    await stores.close();
    // Opening again starts from an empty database.
    const { stores: again } = await openFresh({ indexedDB: factory, name });
    expect(await again.events.listExecutions()).toEqual([]);
    await again.close();
  });

  it("refuses at boot, not mid-run, when the database is newer than this code", async () => {
    const { factory, name } = await openFresh().then(async (opened) => {
      await opened.stores.close();
      return opened;
    });
    (await settle(factory.open(name, SCHEMA_VERSION + 3))).close();
    await expect(openFresh({ indexedDB: factory, name })).rejects.toMatchObject({ reason: "newer-version" });
  });

  it("a live list of a database newer than this code reports the same clear error", async () => {
    const { stores, factory, name } = await openFresh();
    await stores.close();
    (await settle(factory.open(name, SCHEMA_VERSION + 1))).close();
    const errors: unknown[] = [];
    const stop = watchExecutions({ name, indexedDB: factory, IDBKeyRange }, () => undefined, {
      onError: (e) => errors.push(e),
    });
    await eventually(errors, (error) => error instanceof IndexedDbConnectionError);
    expect(errors[0]).toMatchObject({ reason: "newer-version", database: name });
    stop();
  });

  it("refuses use after close", async () => {
    const { stores } = await openFresh();
    await stores.close();
    await expect(stores.events.head("e1")).rejects.toMatchObject({ reason: "closed" });
  });
});

describe("what the app hears of its connection (issue 36: the story page showed nothing)", () => {
  it("onConnectionLost tells of a delete and of a newer version when they happen, not at the next write", async () => {
    const lost: IndexedDbConnectionError[] = [];
    const { stores, factory, name } = await openFresh({ onConnectionLost: (error) => lost.push(error) });
    await stores.events.append("e1", 0, [started(1)]);
    (await settle(factory.open(name, SCHEMA_VERSION + 1))).close();
    await eventually(lost, (latest) => latest?.reason === "newer-version");
    expect(lost).toHaveLength(1);
    await stores.close();

    const deleted: IndexedDbConnectionError[] = [];
    const { stores: other, factory: f2, name: n2 } = await openFresh({ onConnectionLost: (e) => deleted.push(e) });
    await settle(f2.deleteDatabase(n2));
    await eventually(deleted, (latest) => latest?.reason === "deleted");
    await other.close();
    expect(deleted).toHaveLength(1);
  });

  it("says nothing when another connection's upgrade was aborted, nor when the app closes its stores", async () => {
    const lost: unknown[] = [];
    const { stores, factory, name } = await openFresh({ onConnectionLost: (error) => lost.push(error) });
    const request = factory.open(name, SCHEMA_VERSION + 1);
    request.onupgradeneeded = () => request.transaction!.abort();
    await expect(settle(request)).rejects.toMatchObject({ name: "AbortError" });
    await stores.events.append("e1", 0, [started(1)]);
    await stores.close();
    expect(lost).toEqual([]);
  });

  it("onBlocked tells of an open that waits on a connection that does not close, and the open goes on after", async () => {
    const { stores, factory, name } = await openFresh();
    await stores.close();
    // An old tab's connection at a lower version that ignores versionchange: recreate the database at version 1.
    await settle(factory.deleteDatabase(name));
    const old = await settle(factory.open(name, 1));
    let blocked = 0;
    const opening = openFresh({ indexedDB: factory, name, onBlocked: () => blocked++ });
    await eventually([0], () => blocked > 0);
    old.close();
    const { stores: opened } = await opening;
    await opened.events.append("e1", 0, [started(1)]);
    expect(blocked).toBe(1);
    await opened.close();
  });
});
