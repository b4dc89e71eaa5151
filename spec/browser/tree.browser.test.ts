// A tree of executions (ADR 0012) in real headless Chromium on IndexedDB: a parent and its child machine exchanging
// messages, the tab reloaded with the child's call in flight, and the tree resumed from IndexedDB by the reloaded
// page: the same output, every log contiguous, each message journaled once, only the call in flight run again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { EVENT_RECEIVED } from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import { openHarnessPage, useBrowserHarness } from "./harness.js";

const harness = useBrowserHarness({ beforeAll, afterAll });
const noise: string[] = [];
const DB = "tree-reload";

describe("a tree of executions in headless Chromium on IndexedDB", () => {
  it("is reloaded with the child's call in flight and resumed from IndexedDB to the same output", async () => {
    const page: Page = await openHarnessPage(harness(), harness().context, noise);
    await page.evaluate(() => window.loom.tree.hold());
    expect(await page.evaluate((db) => window.loom.tree.start(db), DB)).toEqual({ ok: true });
    await page.waitForFunction(() => window.loom.tree.holding(), undefined, { timeout: 20_000 });

    await page.reload();
    await page.waitForFunction(() => window.loom?.ready === true, undefined, { timeout: 20_000 });
    const resumed = (await page.evaluate((db) => window.loom.tree.resumeAll(db), DB)) as {
      ok: boolean;
      value: string[];
    };
    expect(resumed.ok).toBe(true);
    expect(resumed.value.sort()).toEqual(["tree", "tree/w"]);
    expect(await page.evaluate((db) => window.loom.tree.result(db), DB)).toEqual({
      ok: true,
      value: { seen: ["progress", "pong"], result: { doubled: 42 } },
    });
    // The call in flight at the reload ran again; nothing recorded did.
    expect(await page.evaluate((db) => window.loom.tree.calls(db), DB)).toBe(2);
    const logs = (
      (await page.evaluate((db) => window.loom.tree.logs(db), DB)) as { value: Record<string, StoredRecord[]> }
    ).value;
    for (const log of Object.values(logs)) expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
    expect(logs.tree!.filter((r) => r.type === EVENT_RECEIVED).map((r) => (r.event as { type: string }).type)).toEqual([
      "PROGRESS",
      "PONG",
    ]);
    expect(noise).toEqual([]);
  }, 120_000);
});
