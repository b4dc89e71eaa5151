// "Clear site data" (the storage wipe devtools and the browser's settings do) under open stores: the
// browser force-closes every connection (a `close` event, no versionchange) and deletes the database.
// The stores must refuse every later call with a typed error, never reopen a fresh, empty database.
// fake-indexeddb's forceCloseDatabase is the spec's forced close; the real wipe runs in Chromium
// (spec/browser/indexeddb.browser.test.ts).
import { forceCloseDatabase, IDBFactory } from "fake-indexeddb";
import { describe, expect, it } from "vitest";
import { IndexedDbConnectionError } from "../../adapters/indexeddb/index.js";
import { openFresh, settle, started, step } from "./helpers.js";

/** A factory that keeps every connection it opened, so a test can force-close them as the browser does. */
function observedFactory(): { factory: IDBFactory; connections: IDBDatabase[] } {
  const factory = new IDBFactory();
  const connections: IDBDatabase[] = [];
  const open = factory.open.bind(factory);
  factory.open = (name: string, version?: number) => {
    const request = open(name, version);
    request.addEventListener("success", () => connections.push(request.result));
    return request;
  };
  return { factory, connections };
}

// fake-indexeddb types the parameter as the IDBDatabase class; it takes a connection.
const forceClose = (db: IDBDatabase) => forceCloseDatabase(db as unknown as typeof IDBDatabase);

/** What the wipe does: every open connection force-closed, then the database deleted. */
async function clearSiteData(factory: IDBFactory, connections: IDBDatabase[], name: string): Promise<void> {
  for (const db of connections) forceClose(db);
  await settle(factory.deleteDatabase(name));
}

describe("IndexedDB site data cleared under open stores", () => {
  it("refuses every later call with IndexedDbConnectionError and never recreates the database", async () => {
    const { factory, connections } = observedFactory();
    const { stores, name } = await openFresh({ indexedDB: factory });
    await stores.events.append("e1", 0, [started(1), step(2)]);
    await clearSiteData(factory, connections, name);

    // Each call's outcome is taken at once: a rejection left unhandled while an earlier one is awaited is
    // reported by the runner as an unhandled rejection (it was, under load).
    const outcome = (pending: Promise<unknown>) =>
      pending.then(
        () => undefined,
        (e: unknown) => e,
      );
    const calls = {
      append: outcome(stores.events.append("e1", 2, [step(3)])),
      appendFresh: outcome(stores.events.append("e2", 0, [started(1)])),
      list: outcome(stores.events.listExecutions()),
      put: outcome(stores.content.put(new Uint8Array([1]))),
      key: outcome(stores.keys.getOrCreate("alice")),
    };
    for (const [call, settled] of Object.entries(calls)) {
      const error = await settled;
      expect(error, call).toBeInstanceOf(IndexedDbConnectionError);
      expect(error, call).toMatchObject({ reason: "vanished", database: name, code: "LOOM_IDB_CONNECTION" });
    }
    const error = await stores.events.head("e1").catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/vanished.*site data.*everything it held is gone/);
    // Nothing was recreated behind the app's back: the database is not there at all.
    expect((await factory.databases()).map((db) => db.name)).not.toContain(name);
    await stores.close();
  });

  it("reopens transparently after a forced close that left the database in place", async () => {
    const { factory, connections } = observedFactory();
    const { stores, name } = await openFresh({ indexedDB: factory });
    await stores.events.append("e1", 0, [started(1)]);
    for (const db of connections) forceClose(db);
    await stores.events.append("e1", 1, [step(2)]);
    expect((await stores.events.read("e1")).map((r) => r.seq)).toEqual([1, 2]);
    expect((await factory.databases()).map((db) => db.name)).toContain(name);
    await stores.close();
  });

  it("opens stores again on the wiped name as a new, empty database", async () => {
    const { factory, connections } = observedFactory();
    const { stores, name } = await openFresh({ indexedDB: factory });
    await stores.events.append("e1", 0, [started(1)]);
    await clearSiteData(factory, connections, name);
    await expect(stores.events.head("e1")).rejects.toMatchObject({ reason: "vanished" });
    await stores.close();
    const { stores: again } = await openFresh({ indexedDB: factory, name });
    expect(await again.events.listExecutions()).toEqual([]);
    await again.close();
  });
});
