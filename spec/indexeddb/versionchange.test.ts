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
