// Erasure on every adapter (ADR 0140 D8): plaintext histories are deleted whole, sealed ones are shredded
// with the subject's key; either way no byte the stores hold reads the subject's canary, and another
// subject's data stays.
import { describe, expect, it } from "vitest";
import { SubjectErasedError } from "../../stores/errors.js";
import { canaryOf, everything, offloaded, runAgent, world } from "../lifecycle/support.js";
import { withStores, type AdapterHarness } from "../support/adapterHarness.js";
import { eraseSubject, exportSubject } from "../../lifecycle.js";

export function describeErasureSuite(name: string, harness: AdapterHarness): void {
  describe(`erasure on ${name}`, () => {
    it(
      "plaintext: the subject's histories and blobs are deleted whole; another subject's stay",
      withStores(harness, async ({ stores }) => {
        const w = world({ stores });
        const app = w.app();
        await runAgent(app, "a1", "A", ["fetch"]);
        await runAgent(app, "b1", "B", ["fetch"]);
        const { fetch } = await offloaded(app, "a1");
        expect((await eraseSubject(app, "A")).historiesDeleted).toEqual(["a1"]);
        expect(await stores.events.getExecution("a1")).toBeUndefined();
        expect(await stores.events.getExecution("b1")).toBeDefined();
        expect(await w.content.has(fetch!)).toBe(false);
        const all = await everything(stores);
        expect(all).not.toContain(canaryOf("A"));
        expect(all).toContain(canaryOf("B"));
        await app.close();
      }),
    );

    it(
      "sealed: the subject's key is shredded and nothing readable is left; the other subject exports whole; a second erase is a no-op",
      withStores(harness, async ({ stores }) => {
        const w = world({ stores, crypto: true });
        const app = w.app();
        await runAgent(app, "a1", "A", ["fetch"]);
        await runAgent(app, "b1", "B", ["fetch"]);
        const { fetch } = await offloaded(app, "a1");
        await eraseSubject(app, "A");
        expect(await stores.keys.isDestroyed("A")).toBe(true);
        expect(await w.content.has(fetch!)).toBe(false);
        expect(await everything(stores)).not.toContain(canaryOf("A"));
        expect((await exportSubject(app, "B")).claimChecked.every((blob) => blob.value !== undefined)).toBe(true);
        expect((await eraseSubject(app, "A")).contentDeleted).toEqual({ deleted: 0, retained: 0 });
        await app.close();
      }),
    );

    it(
      "an erasure holds across a reopen: a fresh app over the reopened stores finds nothing of the subject",
      withStores(harness, async (opened) => {
        const first = world({ stores: opened.stores }).app();
        await runAgent(first, "a1", "A", ["fetch"]);
        await runAgent(first, "b1", "B", ["fetch"]);
        await eraseSubject(first, "A");
        await first.close();
        const stores = await opened.reopen();
        const second = world({ stores }).app();
        expect(await stores.events.getExecution("a1")).toBeUndefined();
        await expect(exportSubject(second, "A")).rejects.toBeInstanceOf(SubjectErasedError);
        expect(await everything(stores)).not.toContain(canaryOf("A"));
        expect(await second.result("b1")).toBeDefined();
        await second.close();
      }),
    );
  });
}
