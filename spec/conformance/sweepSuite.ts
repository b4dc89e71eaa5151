// The sweep on every adapter (ADR 0140 D6, ADR 0146): retained refs are kept while cited; a telemetry
// ref is reclaimed once its TTL has passed from its execution's end, with the conditional delete.
import { describe, expect, it } from "vitest";
import { simulatedClock } from "../../actors/clock.js";
import { utf8 } from "../../stores/bytes.js";
import { offloaded, runAgent, world } from "../lifecycle/support.js";
import { withStores, type AdapterHarness } from "../support/adapterHarness.js";
import { sweep } from "../../lifecycle.js";

export function describeSweepSuite(name: string, harness: AdapterHarness): void {
  describe(`the sweep on ${name}`, () => {
    it(
      "reclaims a telemetry blob once its TTL has passed and keeps a cited retained one",
      withStores(harness, async ({ stores }) => {
        const clock = simulatedClock(1_000);
        const w = world({ stores, clock, snapshotEvery: false });
        const app = w.app();
        await runAgent(app, "t1", "A", ["telemetry"]);
        await runAgent(app, "f1", "A", ["fetch"]);
        const { telemetry } = await offloaded(app, "t1");
        const { fetch } = await offloaded(app, "f1");
        clock.advance(200);
        expect((await sweep(app, { ttlMs: 300 })).deleted).toBe(0);
        clock.advance(200);
        expect((await sweep(app, { ttlMs: 300 })).deleted).toBe(1);
        expect(await w.content.has(telemetry!)).toBe(false);
        expect(await w.content.has(fetch!)).toBe(true);
        await app.close();
      }),
    );

    it(
      "keeps a ref a snapshot cites, and reclaims an orphan blob nothing cites",
      withStores(harness, async ({ stores }) => {
        const clock = simulatedClock(1_000);
        const w = world({ stores, clock, snapshotEvery: 2 });
        const app = w.app();
        await runAgent(app, "t1", "A", ["telemetry"]);
        expect(await stores.events.getSnapshot("t1")).toBeDefined();
        const orphan = await stores.content.put(utf8("nobody cites me"));
        clock.advance(365 * 86_400_000);
        const result = await sweep(app, { ttlMs: 86_400_000 });
        expect(result.deleted).toBe(1);
        expect(await w.content.has(orphan)).toBe(false);
        expect(await w.content.has((await offloaded(app, "t1")).telemetry!)).toBe(true);
        await app.close();
      }),
    );

    it(
      "the sweep's verdicts survive a reopen: a second sweep from a fresh app over the reopened stores deletes nothing more",
      withStores(harness, async (opened) => {
        const clock = simulatedClock(1_000);
        const first = world({ stores: opened.stores, clock, snapshotEvery: false }).app();
        await runAgent(first, "t1", "A", ["telemetry"]);
        await runAgent(first, "f1", "A", ["fetch"]);
        clock.advance(1_000);
        expect((await sweep(first, { ttlMs: 300 })).deleted).toBe(1);
        await first.close();
        const w = world({ stores: await opened.reopen(), clock, snapshotEvery: false });
        const second = w.app();
        expect((await sweep(second, { ttlMs: 300 })).deleted).toBe(0);
        expect(await w.content.has((await offloaded(second, "f1")).fetch!)).toBe(true);
        await second.close();
      }),
    );
  });
}
