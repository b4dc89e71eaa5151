// The browser-offline story in headless Chromium, as a user meets it: the page is built with Vite and
// served by stories/browser-offline/serve.ts; the agent runs with the browser offline, the tab is
// reloaded mid-run and resumes the execution from IndexedDB with no recorded call repeated, a second
// tab lists the execution live (and leaves it to the Web Lock holder), and a screenshot of the page
// after the reload is written to docs/img/browser-offline.png when LOOMWORK_UPDATE_SCREENSHOTS=1.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { memoryStores } from "../../stores/memory.js";
import { DEFAULT_PROMPT, researchEffects, researchLoop } from "../../stories/browser-offline/agent.js";
import { buildStory, serveStatic, type StaticServer } from "../../stories/browser-offline/serve.js";
import { launchChromium } from "../browser/chromium.js";

// The committed screenshot is rewritten only on request, so a test run leaves the tree clean.
const SCREENSHOT = process.env.LOOMWORK_UPDATE_SCREENSHOTS
  ? join(import.meta.dirname, "../../docs/img/browser-offline.png")
  : join(tmpdir(), `loomwork-browser-offline-${process.pid}.png`);
// Per tool call (a model call takes half): slow enough that the run is still going after a reload.
const PACE_MS = 600;

interface Running {
  outDir: string;
  server: StaticServer;
  browser: Browser;
}
// A failed start (no Chromium, a build error) fails the test with its message instead of skipping it.
let launched: Running | Error;
const running = (): Running => {
  if (launched instanceof Error) throw launched;
  return launched;
};

beforeAll(async () => {
  const outDir = await mkdtemp(join(tmpdir(), "loomwork-story-browser-"));
  try {
    await buildStory(outDir);
    const server = await serveStatic(outDir);
    launched = {
      outDir,
      server,
      browser: await launchChromium().catch(async (error: unknown) => (await server.close(), Promise.reject(error))),
    };
  } catch (error) {
    await rm(outDir, { recursive: true, force: true });
    launched = error instanceof Error ? error : new Error(String(error));
  }
});

afterAll(async () => {
  if (launched instanceof Error || !launched) return;
  await launched.browser.close();
  await launched.server.close();
  await rm(launched.outDir, { recursive: true, force: true });
});

const noise: string[] = [];

async function openTab(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  page.on("console", (message) => noise.push(`console.${message.type()}: ${message.text()}`));
  page.on("pageerror", (error) => noise.push(`pageerror: ${error.message}`));
  await page.goto(`${running().server.url}?pace=${PACE_MS}`);
  await untilReady(page);
  return page;
}

const untilReady = (page: Page) => page.waitForSelector("body[data-ready=true]", { timeout: 10_000 });
const listed = (page: Page, executionId: string, status: string) =>
  page.locator(`#executions button[data-execution="${executionId}"][data-status="${status}"]`);

/** The answer the same agent gives uninterrupted, in Node on memory stores. */
async function uninterruptedAnswer(): Promise<string> {
  const app = createApp(defineConfig({ stores: memoryStores(), effects: researchEffects(0, () => undefined) }));
  await app.start(researchLoop, { executionId: "reference", input: { prompt: DEFAULT_PROMPT } });
  return ((await app.result("reference")) as { text: string }).text;
}

describe("story: browser-offline", () => {
  it("runs an agent offline in the tab, resumes it after a reload with no recorded call repeated, and lists it live", async () => {
    const { browser, server } = running();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const requests: Request[] = [];
    context.on("request", (request) => requests.push(request));
    const tab = await openTab(context);

    // The agent runs with the network off: the model is scripted and the journal is IndexedDB.
    await context.setOffline(true);
    await expect.poll(() => tab.locator("#network").textContent()).toBe("offline");
    await tab.click("#run button[type=submit]");
    const executionId = await tab
      .locator("#executions button[data-status=running]")
      .first()
      .getAttribute("data-execution", { timeout: 10_000 });
    expect(executionId).toMatch(/^run-/);
    await tab.waitForFunction(() => document.querySelectorAll(".timeline [data-step]").length >= 2, undefined, {
      timeout: 10_000,
    });

    // A second tab of the origin lists the execution, sees the first tab holds its Web Lock, and only watches.
    await context.setOffline(false);
    const watcher = await openTab(context);
    await listed(watcher, executionId!, "running").getByText("running in another tab").waitFor({ timeout: 10_000 });

    // Reload the first tab mid-run.
    const before = await tab
      .locator(".timeline [data-step]")
      .evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset.step!));
    expect(await listed(tab, executionId!, "running").count()).toBe(1);
    await tab.reload();
    await untilReady(tab);
    await context.setOffline(true);

    // It resumed the unfinished execution on load, and the list followed it to "done" without a reload.
    await tab.locator("[data-testid=resumed]").waitFor({ timeout: 10_000 });
    await listed(tab, executionId!, "done").waitFor({ timeout: 15_000 });
    await listed(watcher, executionId!, "done").waitFor({ timeout: 10_000 });
    await tab.locator("[data-testid=answer]").waitFor();
    expect(await tab.locator("[data-testid=answer]").textContent()).toBe(await uninterruptedAnswer());
    expect(await tab.locator("[data-testid=reruns]").textContent()).toBe("Recorded calls repeated: 0.");
    // The sub-agent that checked a note is a child execution: a nested row of the timeline, not a run of the list.
    const child = tab.locator(`.timeline [data-child="${executionId}/tool:3:1"]`);
    await expect.poll(() => child.locator(".pill").first().textContent()).toBe("done");
    expect(await child.locator("ol.timeline.nested [data-step]").count()).toBe(3);
    expect(await tab.locator(`#executions button[data-execution="${executionId}/tool:3:1"]`).count()).toBe(0);
    expect(await tab.locator("[data-testid=answer]").textContent()).toContain("A sub-agent checked");

    // Steps recorded before the reload were served from the journal; the rest ran in this page load.
    const sources = await tab
      .locator(".timeline [data-step]")
      .evaluateAll((rows) =>
        Object.fromEntries(
          rows.map((row) => [(row as HTMLElement).dataset.step!, (row as HTMLElement).dataset.source!]),
        ),
      );
    for (const step of before) expect(sources[step], step).toBe("replayed");
    const ranNow = Object.values(sources).filter((source) => source === "ran now").length;
    expect(ranNow).toBeGreaterThan(0);
    const [model, tool] = (await tab.locator("#calls").textContent())!.match(/\d+/g)!.map(Number) as [number, number];
    expect(model + tool).toBe(ranNow);

    // Nothing but the page's own files was ever requested: no model API, no fetch, no socket.
    const origin = new URL(server.url).origin;
    for (const request of requests) {
      expect(new URL(request.url()).origin, request.url()).toBe(origin);
      // The service worker (sw.js, fetched by the page) fetches the page's own shell to cache it: nothing else.
      if (request.serviceWorker() || new URL(request.url()).pathname === "/sw.js") {
        expect(new URL(request.url()).pathname, request.url()).toMatch(/^\/(sw\.js|assets\/[\w.-]+|)$/);
        continue;
      }
      expect(["document", "script", "stylesheet"], `${request.resourceType()} ${request.url()}`).toContain(
        request.resourceType(),
      );
    }

    await mkdir(join(SCREENSHOT, ".."), { recursive: true });
    await tab.screenshot({ path: SCREENSHOT, fullPage: true });
    await context.close();
    expect(noise).toEqual([]);
  });

  it("asks the user before it saves: the run parks, survives a reload, and a click on Approve finishes it", async () => {
    const context = await running().browser.newContext({ viewport: { width: 1280, height: 900 } });
    const tab = await openTab(context);
    await context.setOffline(true);
    await tab.fill("#prompt", `${DEFAULT_PROMPT} Then save it.`);
    await tab.click("#run button[type=submit]");
    const approve = tab.locator("[data-testid=approval] button[data-approve]");
    await approve.waitFor({ timeout: 20_000 });
    expect(await tab.locator("[data-testid=approval]").textContent()).toContain("The agent asks to run save_note");
    const executionId = await tab
      .locator("#executions button[data-status=running]")
      .first()
      .getAttribute("data-execution");

    // Parked in awaitingApproval, journaled: a reload finds it waiting, with the same buttons.
    await context.setOffline(false); // the page itself is served over HTTP
    await tab.reload();
    await untilReady(tab);
    await context.setOffline(true);
    await approve.waitFor({ timeout: 10_000 });
    await approve.click();
    await listed(tab, executionId!, "done").waitFor({ timeout: 15_000 });
    await tab.locator("[data-testid=answer]").waitFor();
    expect(await tab.locator("[data-testid=answer]").textContent()).toMatch(
      /^From 3 field notes: .* Saved to your notebook\.$/,
    );
    expect(await tab.locator("[data-testid=approval]").count()).toBe(0);
    await context.close();
    expect(noise).toEqual([]);
  });
});
