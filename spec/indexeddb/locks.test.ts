// The cross-tab writer lock: exclusive through Web Locks when present, and a no-op lease when
// absent, in which case the expected-seq fence alone keeps the log linear.
import { describe, expect, it } from "vitest";
import { createMachine } from "xstate";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import {
  acquireWriter,
  takeOverWhenReleased,
  writerLockName,
  type IndexedDbStores,
  type LockManagerLike,
} from "../../adapters/indexeddb/index.js";
import { ConcurrencyError, WriterLockedError } from "../../stores/errors.js";
import { openFresh, started, step } from "./helpers.js";

/** A minimal exclusive Web Locks manager with the semantics the adapter relies on. */
class FakeLocks implements LockManagerLike {
  readonly requests: Array<{ name: string; ifAvailable: boolean; hasSignal: boolean }> = [];
  private readonly held = new Set<string>();
  private readonly waiting = new Map<string, Array<() => void>>();

  async request(
    name: string,
    options: { ifAvailable?: boolean; signal?: AbortSignal },
    callback: (lock: unknown) => unknown,
  ): Promise<unknown> {
    if (options.ifAvailable && options.signal) throw new DOMException("signal with ifAvailable", "NotSupportedError");
    this.requests.push({ name, ifAvailable: !!options.ifAvailable, hasSignal: !!options.signal });
    if (this.held.has(name)) {
      if (options.ifAvailable) return callback(null);
      await new Promise<void>((resolve, reject) => {
        const queue = this.waiting.get(name) ?? [];
        queue.push(resolve);
        this.waiting.set(name, queue);
        options.signal?.addEventListener("abort", () => {
          queue.splice(queue.indexOf(resolve), 1);
          reject(options.signal!.reason);
        });
      });
    }
    this.held.add(name);
    try {
      return await callback({ name, mode: "exclusive" });
    } finally {
      const next = this.waiting.get(name)?.shift();
      if (next) next();
      else this.held.delete(name);
    }
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("acquireWriter with Web Locks", () => {
  it("holds loomwork:<name>:<executionId> exclusively and refuses a second writer at once", async () => {
    const locks = new FakeLocks();
    const first = await acquireWriter("app", "e1", { locks });
    expect(first).toMatchObject({ resource: "loomwork:app:e1", exclusive: true });
    expect(writerLockName("app", "e1")).toBe("loomwork:app:e1");
    const refused = await acquireWriter("app", "e1", { locks }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WriterLockedError);
    expect((refused as Error).message).toContain("loomwork:app:e1");
    // Other executions and other databases are independent.
    await expect(acquireWriter("app", "e2", { locks })).resolves.toMatchObject({ exclusive: true });
    await expect(acquireWriter("other", "e1", { locks })).resolves.toMatchObject({ exclusive: true });
    await first.release();
    await first.release();
    await expect(acquireWriter("app", "e1", { locks })).resolves.toMatchObject({ exclusive: true });
  });

  it("a waiting writer takes over when the holder releases, and can give up", async () => {
    const locks = new FakeLocks();
    const first = await acquireWriter("app", "e1", { locks });
    let second: unknown;
    const pending = acquireWriter("app", "e1", { locks, wait: true }).then((lease) => (second = lease));
    await tick();
    expect(second).toBeUndefined();
    await first.release();
    await pending;
    expect(second).toMatchObject({ exclusive: true });

    const controller = new AbortController();
    const third = acquireWriter("app", "e1", { locks, wait: true, signal: controller.signal });
    controller.abort(new Error("tab is closing"));
    await expect(third).rejects.toThrow("tab is closing");
    expect(locks.requests.at(-1)).toMatchObject({ ifAvailable: false, hasSignal: true });
  });

  it("stores.acquireWriter uses the database name and the injected lock manager", async () => {
    const locks = new FakeLocks();
    const { stores, name } = await openFresh({ locks });
    const lease = await stores.acquireWriter("e1");
    expect(lease.resource).toBe(`loomwork:${name}:e1`);
    await expect(stores.acquireWriter("e1")).rejects.toBeInstanceOf(WriterLockedError);
    await lease.release();
    await stores.close();
  });
});

describe("acquireWriter without Web Locks", () => {
  it("degrades to a non-exclusive lease in Node, where navigator.locks is absent", async () => {
    expect((globalThis as { navigator?: { locks?: unknown } }).navigator?.locks).toBeUndefined();
    const a = await acquireWriter("app", "e1");
    const b = await acquireWriter("app", "e1");
    expect([a.exclusive, b.exclusive]).toEqual([false, false]);
    await a.release();
  });

  it("leaves the seq fence as the guard: two 'writers' never fork, skip or duplicate a seq", async () => {
    const { stores, factory, name } = await openFresh({ locks: null });
    const { stores: otherTab } = await openFresh({ indexedDB: factory, name, locks: null });
    const leases = await Promise.all([stores.acquireWriter("e1"), otherTab.acquireWriter("e1")]);
    expect(leases.map((l) => l.exclusive)).toEqual([false, false]);
    await stores.events.append("e1", 0, [started(1)]);
    // Both believe the head is 1 and race to append seq 2.
    const results = await Promise.allSettled([
      stores.events.append("e1", 1, [step(2, "a")]),
      otherTab.events.append("e1", 1, [step(2, "b")]),
    ]);
    expect(results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason)).toEqual([
      expect.any(ConcurrencyError),
    ]);
    // The loser reloads the head and continues after the winner.
    await otherTab.events.append("e1", await otherTab.events.head("e1"), [step(3)]);
    expect((await stores.events.read("e1")).map((r) => r.seq)).toEqual([1, 2, 3]);
    await Promise.all([stores.close(), otherTab.close()]);
  });
});

describe("taking over an execution another tab ran (issue 36)", () => {
  const waiter = createMachine({
    id: "waiter",
    initial: "waiting",
    states: { waiting: { on: { go: "done" } }, done: { type: "final" } },
  });
  const appOn = (stores: IndexedDbStores) => createApp(defineConfig({ stores, effects: {}, logics: [waiter] }));

  it("the documented way works: acquireWriter({ wait: true }), then app.resume runs under that lease", async () => {
    const locks = new FakeLocks();
    const { stores: ownerStores, factory, name } = await openFresh({ locks });
    const { stores: otherStores } = await openFresh({ indexedDB: factory, name, locks });
    const owner = appOn(ownerStores);
    await owner.start(waiter, { executionId: "e1" });
    // The other tab queues for the lock; the owner tab goes away (its app closes, as a closed tab's locks go).
    const queued = acquireWriter(name, "e1", { locks, wait: true });
    await owner.close();
    const lease = await queued;
    const other = appOn(otherStores);
    try {
      const actor = await other.resume("e1");
      // Only one writer in this tab: a second runtime writer here is still refused.
      await expect(appOn(otherStores).resume("e1")).rejects.toBeInstanceOf(WriterLockedError);
      await lease.release();
      // The runtime still holds the lock (the lease was lent to it) until the run ends.
      await expect(acquireWriter(name, "e1", { locks })).rejects.toBeInstanceOf(WriterLockedError);
      await actor.sendAsync({ type: "go" });
      await expect(other.result("e1")).resolves.toBeUndefined();
      await expect
        .poll(() =>
          acquireWriter(name, "e1", { locks }).then(
            (l) => (void l.release(), true),
            () => false,
          ),
        )
        .toBe(true);
    } finally {
      await other.close();
      await Promise.all([ownerStores.close(), otherStores.close()]);
    }
  });

  it("takeOverWhenReleased resumes an unfinished execution once its owner lets go, and skips an ended one", async () => {
    const locks = new FakeLocks();
    const { stores: ownerStores, factory, name } = await openFresh({ locks });
    const { stores: otherStores } = await openFresh({ indexedDB: factory, name, locks });
    const owner = appOn(ownerStores);
    await owner.start(waiter, { executionId: "e1" });
    const other = appOn(otherStores);
    let taken: unknown;
    const takeover = takeOverWhenReleased(otherStores, other, "e1").then((actor) => (taken = actor));
    await tick();
    expect(taken).toBeUndefined();
    await owner.close();
    await takeover;
    expect(taken).toBeDefined();
    await (taken as { sendAsync(event: { type: string }): Promise<unknown> }).sendAsync({ type: "go" });
    expect((await otherStores.events.getExecution("e1"))?.status).toBe("done");
    await expect(takeOverWhenReleased(otherStores, other, "e1")).resolves.toBeUndefined();
    await other.close();
    await Promise.all([ownerStores.close(), otherStores.close()]);
  });

  it("with graceMs, a tab that takes its lock back (a reload) keeps its run; the watcher waits again", async () => {
    const locks = new FakeLocks();
    const { stores: ownerStores, factory, name } = await openFresh({ locks });
    const { stores: otherStores } = await openFresh({ indexedDB: factory, name, locks });
    const starter = appOn(ownerStores);
    await starter.start(waiter, { executionId: "e1" });
    const other = appOn(otherStores);
    const takeover = takeOverWhenReleased(otherStores, other, "e1", { graceMs: 400 });
    takeover.catch(() => undefined);
    await tick();
    // The owner tab reloads: its lock goes, and the reloaded page takes it back as it boots, within the grace.
    await starter.close();
    const reloaded = appOn(ownerStores);
    let actor: { sendAsync(event: { type: string }): Promise<unknown> } | undefined;
    await expect
      .poll(() =>
        reloaded.resume("e1").then(
          (resumed) => ((actor = resumed), true),
          () => false,
        ),
      )
      .toBe(true);
    await actor!.sendAsync({ type: "go" });
    await expect(reloaded.result("e1")).resolves.toBeUndefined();
    // The run ended in the reloaded tab: the watcher never resumed it.
    await expect(takeover).resolves.toBeUndefined();
    await Promise.all([reloaded.close(), other.close()]);
    await Promise.all([ownerStores.close(), otherStores.close()]);
  });
});
