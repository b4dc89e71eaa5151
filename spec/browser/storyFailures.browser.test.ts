// Issue 36, the tab: the browser-offline story's failure states in real Chromium, each asserting what the user
// sees: a visible message that says what to do (the storage quota exhausted mid-run, the database deleted or
// upgraded by another tab, the open blocked by an old tab, a database newer than the page), "Run agent" never
// doing a native form GET, persistent storage requested, and a reload offline with the server gone served by
// the story's service worker, resuming the run. Screenshots to docs/img/tab-*.png with LOOM_SCREENSHOTS=1.
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DATABASE,
  listed,
  noise,
  openStory,
  runAgent,
  screenshot,
  serveStory,
  untilReady,
  type ServedStory,
} from "./story.js";

let story: ServedStory;
beforeAll(async () => {
  story = await serveStory();
}, 120_000);
afterAll(() => story?.close());

/** A page of the story's origin that is not the story (the server answers 404): another tab of the site. */
async function otherTab(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${story.url}elsewhere`);
  return page;
}

const alert = (page: Page, kind: string) => page.locator(`#alerts [data-testid=alert-${kind}]`);

describe("the story's failure states (issue 36)", () => {
  it("an open blocked by an old tab says to close it, goes on once it closes, and Enter never submits the form", async () => {
    const context = await story.profile();
    const old = await otherTab(context);
    // An old tab holds the database open at version 1 and ignores versionchange.
    await old.evaluate(
      (name) =>
        new Promise<void>((resolve, reject) => {
          const request = indexedDB.open(name, 1);
          request.onsuccess = () => (((window as unknown as { held: IDBDatabase }).held = request.result), resolve());
          request.onerror = () => reject(request.error);
        }),
      DATABASE,
    );
    const page = await openStory(context, story.url, false);
    await alert(page, "blocked").waitFor({ timeout: 15_000 });
    expect(await alert(page, "blocked").textContent()).toContain("Close or reload the other tabs of this site");
    expect(await page.locator("#run-button").isDisabled()).toBe(true);
    await page.locator("#prompt").press("Enter");
    await screenshot(page, "blocked");
    expect(new URL(page.url()).search).toBe("");
    await old.evaluate(() => (window as unknown as { held: IDBDatabase }).held.close());
    await untilReady(page);
    expect(await alert(page, "blocked").count()).toBe(0);
    expect(await page.locator("#storage").textContent()).toMatch(/^storage: (persistent|best-effort)$/);
    expect(new URL(page.url()).search).toBe("");
  }, 60_000);

  it("a database newer than the page stops it at boot with a message to reload", async () => {
    const context = await story.profile();
    const newer = await otherTab(context);
    await newer.evaluate(
      (name) =>
        new Promise<void>((resolve, reject) => {
          const request = indexedDB.open(name, 99);
          request.onsuccess = () => (request.result.close(), resolve());
          request.onerror = () => reject(request.error);
        }),
      DATABASE,
    );
    const page = await openStory(context, story.url, false);
    await alert(page, "newer-version").waitFor({ timeout: 15_000 });
    expect(await alert(page, "newer-version").textContent()).toContain("Reload this page");
    expect(await page.getAttribute("body", "data-ready")).toBe("failed");
    expect(await page.locator("#run-button").isDisabled()).toBe(true);
    await screenshot(page, "newer-version");
  }, 60_000);

  it("another tab deleting the database, or upgrading it, is a message in this one at once", async () => {
    const context = await story.profile();
    const page = await openStory(context, story.url);
    const other = await otherTab(context);
    await other.evaluate(
      (name) =>
        new Promise<void>((resolve, reject) => {
          const request = indexedDB.deleteDatabase(name);
          request.onsuccess = () => resolve();
          request.onerror = () => reject(request.error);
        }),
      DATABASE,
    );
    await alert(page, "deleted").waitFor({ timeout: 15_000 });
    expect(await alert(page, "deleted").textContent()).toContain("Reload to start with an empty journal");
    await screenshot(page, "deleted");

    await page.reload();
    await untilReady(page);
    expect(await alert(page, "deleted").count()).toBe(0);
    await other.evaluate(
      (name) =>
        new Promise<void>((resolve, reject) => {
          const request = indexedDB.open(name, 99);
          request.onsuccess = () => (request.result.close(), resolve());
          request.onerror = () => reject(request.error);
        }),
      DATABASE,
    );
    await alert(page, "newer-version").waitFor({ timeout: 15_000 });
    expect(noise.filter((line) => !line.includes("sw.js"))).toEqual([]);
  }, 60_000);

  it("the quota exhausted (Chromium's own quota, overridden): Run agent says there is no room, and works once there is", async () => {
    const context = await story.profile();
    const page = await openStory(context, story.url);
    // Chromium applies a quota override to the connections opened after it: hence the reload.
    const cdp = await context.newCDPSession(page);
    const origin = new URL(story.url).origin;
    await cdp.send("Storage.overrideQuotaForOrigin", { origin, quotaSize: 1 });
    await page.reload();
    await untilReady(page);
    await page.click("#run button[type=submit]");
    await alert(page, "quota").waitFor({ timeout: 20_000 });
    expect(await alert(page, "quota").textContent()).toContain("nothing it had saved is lost");
    await screenshot(page, "quota");
    await cdp.send("Storage.overrideQuotaForOrigin", { origin });
    await page.reload();
    await untilReady(page);
    const executionId = await runAgent(page);
    await listed(page, executionId, "done").waitFor({ timeout: 30_000 });
  }, 90_000);

  it("the quota exhausted mid-run stops the run with a message, and it resumes from the journal after a reload", async () => {
    const context = await story.profile();
    const page = await openStory(context, `${story.url}?pace=300`);
    const executionId = await runAgent(page);
    await page.waitForFunction(() => document.querySelectorAll(".timeline [data-step]").length >= 2, undefined, {
      timeout: 15_000,
    });
    // From now on every IndexedDB write of this page load fails as Chromium fails one over quota.
    await page.evaluate(() => {
      const full = () => {
        throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
      };
      IDBObjectStore.prototype.put = full;
      IDBObjectStore.prototype.add = full;
    });
    await alert(page, "quota").waitFor({ timeout: 20_000 });
    await listed(page, executionId, "running").getByText("stopped: out of storage").waitFor({ timeout: 10_000 });
    await screenshot(page, "quota-mid-run");

    await page.reload();
    await untilReady(page);
    await page.locator("[data-testid=resumed]").waitFor({ timeout: 15_000 });
    await listed(page, executionId, "done").waitFor({ timeout: 20_000 });
    expect(await page.locator("[data-testid=reruns]").textContent()).toBe("Recorded calls repeated: 0.");
  }, 90_000);

  // Last: it stops the page's server.
  it("a reload offline, with the page's server gone, loads from the service worker and resumes the run", async () => {
    const context = await story.profile();
    const page = await openStory(context, `${story.url}?pace=400`);
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
    const executionId = await runAgent(page);
    await page.waitForFunction(() => document.querySelectorAll(".timeline [data-step]").length >= 2, undefined, {
      timeout: 15_000,
    });
    await context.setOffline(true);
    await story.stopServer();
    await page.reload();
    await untilReady(page);
    await page.locator("[data-testid=resumed]").getByText("Resumed after a reload").waitFor({ timeout: 15_000 });
    await listed(page, executionId, "done").waitFor({ timeout: 20_000 });
    expect(await page.locator("[data-testid=reruns]").textContent()).toBe("Recorded calls repeated: 0.");
    expect(await page.locator("#network").textContent()).toBe("offline");
    await screenshot(page, "offline-reload");
  }, 90_000);
});
