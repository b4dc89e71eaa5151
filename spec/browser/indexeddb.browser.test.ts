// The IndexedDB adapter in a real headless Chromium on a persistent profile: persistence across a reload
// and across a browser restart (a SIGKILLed browser: spec/reliability/browserCrash.test.ts), the cross-tab
// writer lock, the live catalogue across tabs, versionchange, and the SPI operations end to end.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright-core";
import type { StoredRecord } from "../../stores/types.js";
import { started, step } from "../conformance/suite.js";
import { openHarnessPage, useBrowserHarness } from "./harness.js";

const harness = useBrowserHarness({ beforeAll, afterAll });
// The adapter must stay silent: any console message or page error fails the run.
const noise: string[] = [];

/**
 * The harness's persistent profile (IndexedDB on disk, as a user's browser keeps it). Every test works
 * on databases of its own names, so they share it without seeing each other's data or Web Locks.
 */
function profile(): BrowserContext {
  return harness().context;
}

function openPage(context: BrowserContext): Promise<Page> {
  return openHarnessPage(harness(), context, noise);
}

const seqs = (records: StoredRecord[]) => records.map((r) => r.seq);

describe("IndexedDB adapter in headless Chromium", () => {
  it("keeps records, catalogue, snapshot, blobs and keys across a page reload", async () => {
    const page = await openPage(profile());
    const records = [started(1, "alice"), step(2, { text: "héllo ✓" }), step(3)];
    const before = await page.evaluate(async (records) => {
      const stores = await window.loom.stores("persist");
      await stores.events.append("e1", 0, records);
      await stores.events.putSnapshot("e1", { seq: 3, at: 9, state: { value: "b" } });
      const address = await stores.content.put(window.loom.utf8("a blob"));
      const key = [...(await stores.keys.getOrCreate("alice"))];
      return { address, key };
    }, records);
    await page.reload();
    await page.waitForFunction(() => window.loom?.ready === true);
    const after = await page.evaluate(async (address) => {
      const stores = await window.loom.stores("persist");
      const bytes = await stores.content.get(address);
      return {
        log: await stores.events.read("e1"),
        info: await stores.events.getExecution("e1"),
        snapshot: await stores.events.getSnapshot("e1"),
        blob: bytes && window.loom.fromUtf8(bytes),
        key: [...((await stores.keys.get("alice")) ?? [])],
      };
    }, before.address);
    expect(after.log).toEqual(records);
    expect(after.info).toMatchObject({ executionId: "e1", subject: "alice", head: 3, status: "running" });
    expect(after.snapshot).toEqual({ seq: 3, at: 9, state: { value: "b" } });
    expect(after.blob).toBe("a blob");
    expect(after.key).toEqual(before.key);
    expect(after.key).toHaveLength(32);
  });

  it("keeps records, catalogue, snapshot, blobs and keys across a browser restart on the same profile", async () => {
    const page = await openPage(profile());
    const records = [started(1, "dora"), step(2, { text: "restart ✓" }), step(3)];
    const before = await page.evaluate(async (records) => {
      const stores = await window.loom.stores("restart");
      await stores.events.append("e1", 0, records);
      await stores.events.putSnapshot("e1", { seq: 2, at: 7, state: { value: "a" } });
      return {
        address: await stores.content.put(window.loom.utf8("kept")),
        key: [...(await stores.keys.getOrCreate("dora"))],
      };
    }, records);
    // The browser process ends and a new one starts on the same user data directory.
    await harness().relaunch();
    const after = await (
      await openPage(profile())
    ).evaluate(async (address) => {
      const stores = await window.loom.stores("restart");
      const bytes = await stores.content.get(address);
      return {
        log: await stores.events.read("e1"),
        info: await stores.events.getExecution("e1"),
        snapshot: await stores.events.getSnapshot("e1"),
        blob: bytes && window.loom.fromUtf8(bytes),
        key: [...((await stores.keys.get("dora")) ?? [])],
      };
    }, before.address);
    expect(after).toEqual({
      log: records,
      info: expect.objectContaining({ executionId: "e1", subject: "dora", head: 3, status: "running" }),
      snapshot: { seq: 2, at: 7, state: { value: "a" } },
      blob: "kept",
      key: before.key,
    });
  });

  it("gives one tab the writer lock; the other takes over when it closes, and no seq is duplicated or skipped", async () => {
    const context = profile();
    const [first, second] = [await openPage(context), await openPage(context)];
    const db = "locks";
    expect(await first.evaluate((db) => window.loom.acquireWriter(db, "e1"), db)).toEqual({
      ok: true,
      value: `loomwork:${db}:e1`,
    });
    await first.evaluate(
      async ([db, records]) => {
        const stores = await window.loom.stores(db);
        await stores.events.append("e1", 0, records);
      },
      [db, [started(1), step(2), step(3)]] as [string, StoredRecord[]],
    );

    const refused = await second.evaluate((db) => window.loom.acquireWriter(db, "e1"), db);
    expect(refused).toMatchObject({ ok: false, error: { name: "WriterLockedError", code: "LOOM_WRITER_LOCKED" } });
    await second.evaluate((db) => window.loom.waitForWriter(db, "e1"), db);
    await second.waitForTimeout(200);
    expect(await second.evaluate((db) => window.loom.holdsWriter(db, "e1"), db)).toBe(false);

    // The holder's tab goes away without releasing: the browser frees its locks.
    await first.close();
    expect(await second.evaluate((db) => window.loom.writerGranted(db, "e1"), db)).toEqual({
      ok: true,
      value: `loomwork:${db}:e1`,
    });
    const result = await second.evaluate(
      async ([db, more]) => {
        const stores = await window.loom.stores(db);
        const head = await stores.events.head("e1");
        // The seq fence still refuses a stale writer, lock or no lock.
        const stale = await window.loom.settle(stores.events.append("e1", head - 1, [more[0]!]));
        await stores.events.append("e1", head, more);
        return { head, stale, log: await stores.events.read("e1") };
      },
      [db, [step(4), step(5)]] as [string, StoredRecord[]],
    );
    expect(result.head).toBe(3);
    expect(result.stale).toMatchObject({ ok: false, error: { name: "ConcurrencyError", code: "LOOM_CONCURRENCY" } });
    expect(seqs(result.log)).toEqual([1, 2, 3, 4, 5]);
  });

  it("updates another tab's live execution list after an append", async () => {
    const context = profile();
    const [writer, watcher] = [await openPage(context), await openPage(context)];
    await watcher.evaluate(() => window.loom.watch("live"));
    await watcher.waitForFunction(() => window.loom.watched("live").length > 0);
    await writer.evaluate(
      async (records) => {
        const stores = await window.loom.stores("live");
        await stores.events.append("run-1", 0, records);
      },
      [started(1, "bob"), step(2)],
    );
    await watcher.waitForFunction(() => window.loom.watched("live").at(-1)?.[0]?.head === 2, undefined, {
      timeout: 10_000,
    });
    const latest = await watcher.evaluate(() => window.loom.watched("live").at(-1));
    expect(latest).toEqual([
      expect.objectContaining({ executionId: "run-1", subject: "bob", head: 2, status: "running" }),
    ]);
  });

  it("closes its connection when another tab upgrades the database, then refuses clearly", async () => {
    const context = profile();
    const [old, newer] = [await openPage(context), await openPage(context)];
    await old.evaluate(
      async (records) => {
        const stores = await window.loom.stores("upgrade");
        await stores.events.append("e1", 0, records);
        window.loom.watch("upgrade");
      },
      [started(1)],
    );
    await old.waitForFunction(() => window.loom.watched("upgrade").length > 0);
    const upgrade = await newer.evaluate(
      (version) =>
        new Promise<{ version: number; blocked: boolean }>((resolve, reject) => {
          let blocked = false;
          const request = indexedDB.open("upgrade", version);
          request.onblocked = () => (blocked = true);
          request.onsuccess = () => {
            request.result.close();
            resolve({ version: request.result.version, blocked });
          };
          request.onerror = () => reject(request.error);
        }),
      await old.evaluate(() => window.loom.SCHEMA_VERSION + 1),
    );
    expect(upgrade.blocked).toBe(false);
    const refused = await old.evaluate(async (record) => {
      const stores = await window.loom.stores("upgrade");
      return window.loom.settle(stores.events.append("e1", 1, [record]));
    }, step(2));
    expect(refused).toMatchObject({ ok: false, error: { name: "IndexedDbConnectionError", reason: "newer-version" } });
  });

  it("runs the SPI operations end to end: append, fence, archive, snapshot, blobs, sweep, keys", async () => {
    const page = await openPage(profile());
    const out = await page.evaluate(
      async ([records, tail]) => {
        const { stores, utf8, fromUtf8, settle } = window.loom;
        const { events, content, keys } = await stores("spi");
        await events.append("e1", 0, records);
        const race = await Promise.all([
          settle(events.append("e1", 4, [tail[0]!])),
          settle(events.append("e1", 4, [tail[0]!])),
        ]);
        const gap = await settle(events.append("e1", 5, [tail[2]!]));
        await events.archive("e1", 2);
        await events.archive("e1", 3);
        const badArchive = await settle(events.archive("e1", 3));
        await events.putSnapshot("e1", { seq: 5, at: 1, state: { n: 5 } });
        await events.putSnapshot("e1", { seq: 4, at: 1, state: { n: 4 } });
        await events.append("other", 0, [records[0]!]);
        const listed = (await events.listExecutions()).map((e) => [e.executionId, e.head]);
        await events.deleteHistory("other");

        const a = await content.put(utf8("old"));
        const b = await content.put(utf8("touched"));
        const cutoff = await content.touchClock!();
        await content.put(utf8("touched"));
        const sweptOld = await content.deleteIfUntouchedSince!(a, cutoff);
        const sweptTouched = await content.deleteIfUntouchedSince!(b, cutoff);
        const blobs = [];
        for await (const info of content.list()) blobs.push([info.address, info.size]);
        const k = await keys.getOrCreate("carol");
        await keys.destroy("carol");
        return {
          race: race.map((r) => r.ok || r.error.name).sort(),
          gap: gap.ok || gap.error.name,
          badArchive: badArchive.ok || badArchive.error.name,
          live: (await events.read("e1")).map((r) => r.seq),
          segments: (await events.readArchives("e1")).map((s) => [s.fromSeq, s.toSeq, s.records.map((r) => r.seq)]),
          head: await events.head("e1"),
          snapshot: await events.getSnapshot("e1"),
          listed,
          afterDelete: (await events.listExecutions()).map((e) => e.executionId),
          addressShape: /^sha256:[0-9a-f]{64}$/.test(a),
          sweptOld,
          sweptTouched,
          blobs,
          touchedText: fromUtf8((await content.get(b))!),
          keyLength: k.length,
          erased: await keys.isDestroyed("carol"),
          recreate: (await settle(keys.getOrCreate("carol"))).ok,
        };
      },
      [
        [started(1, "s"), step(2), step(3), step(4)],
        [step(5), step(6), step(7)],
      ] as [StoredRecord[], StoredRecord[]],
    );
    expect(out).toMatchObject({
      race: ["ConcurrencyError", true],
      gap: "RangeError",
      badArchive: "RangeError",
      live: [4, 5],
      segments: [
        [1, 2, [1, 2]],
        [3, 3, [3]],
      ],
      head: 5,
      snapshot: { seq: 5, at: 1, state: { n: 5 } },
      listed: [
        ["e1", 5],
        ["other", 1],
      ],
      afterDelete: ["e1"],
      addressShape: true,
      sweptOld: true,
      sweptTouched: false,
      touchedText: "touched",
      keyLength: 32,
      erased: true,
      recreate: false,
    });
    expect(out.blobs).toEqual([[expect.stringMatching(/^sha256:/), 7]]);
  });

  it("refuses with a typed error, and recreates nothing, once site data is cleared under a running agent", async () => {
    const page = await openPage(profile());
    const held = "agent#turn:2:tool:0";
    const run = { db: "wiped", executionId: "run", turns: 4, lock: true };
    await page.evaluate((id) => window.loom.agent.hold([id]), held);
    expect(await page.evaluate((run) => window.loom.agent.start(run), run)).toEqual({ ok: true, value: null });
    await page.waitForFunction((id) => window.loom.agent.holding().includes(id), held, { timeout: 10_000 });
    expect((await page.evaluate((db) => window.loom.agent.log(db, "run"), run.db)).length).toBeGreaterThan(0);

    // What devtools' "Clear site data" (and the browser's settings) do to the origin's IndexedDB.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Storage.clearDataForOrigin", { origin: new URL(harness().url).origin, storageTypes: "indexeddb" });
    await cdp.detach();

    // The held tool call returns into a journal that is gone: the run ends with the typed error.
    await page.evaluate((id) => window.loom.agent.release(id), held);
    const vanished = {
      ok: false,
      error: { name: "IndexedDbConnectionError", code: "LOOM_IDB_CONNECTION", reason: "vanished" },
    };
    expect(await page.evaluate((db) => window.loom.agent.result(db, "run"), run.db)).toMatchObject(vanished);
    // A new run on the same stores is refused the same way, and no empty database was made for it.
    expect(await page.evaluate((run) => window.loom.agent.start({ ...run, executionId: "next" }), run)).toMatchObject(
      vanished,
    );
    const listed = await page.evaluate(async () => (await indexedDB.databases()).map((db) => db.name));
    expect(listed).not.toContain(run.db);
  });

  it("printed nothing to the console", () => {
    harness();
    expect(noise).toEqual([]);
  });
});
