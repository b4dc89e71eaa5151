// The browser-offline story served for the specs that drive its failure states and its takeover: built once
// with Vite into a temporary directory, served on 127.0.0.1, opened in Chromium on a persistent profile (a
// user data directory: IndexedDB, Web Locks and the service worker as a user's browser has them).
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { buildStory, serveStatic, type StaticServer } from "../../stories/browser-offline/serve.js";
import { launchProfile } from "./chromium.js";

export const DATABASE = "loomwork-browser-offline";

export interface ServedStory {
  readonly url: string;
  /** A new persistent context (its own profile directory), closed by close(). */
  profile(): Promise<BrowserContext>;
  /** Stops the page's server (a reload then works only from the service worker's cache). */
  stopServer(): Promise<void>;
  close(): Promise<void>;
}

export async function serveStory(): Promise<ServedStory> {
  const outDir = await mkdtemp(join(tmpdir(), "loomwork-story-"));
  await buildStory(outDir);
  const server: StaticServer = await serveStatic(outDir);
  const contexts: BrowserContext[] = [];
  const dirs: string[] = [];
  let stopped: Promise<void> | undefined;
  const stopServer = () => (stopped ??= server.close());
  return {
    stopServer,
    url: server.url,
    profile: async () => {
      const dir = await mkdtemp(join(tmpdir(), "loomwork-story-profile-"));
      dirs.push(dir);
      const context = await launchProfile(dir);
      contexts.push(context);
      return context;
    },
    close: async () => {
      await Promise.all(contexts.map((context) => context.close().catch(() => undefined)));
      await stopServer();
      await Promise.all([outDir, ...dirs].map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}

/** Console errors and page errors of every page opened with openStory, to assert none was unexpected. */
export const noise: string[] = [];

/** Opens the story in a new tab of `context`; waits until it booted unless `ready` is false. */
export async function openStory(context: BrowserContext, url: string, ready = true): Promise<Page> {
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") noise.push(`console.error: ${message.text()}`);
  });
  page.on("pageerror", (error) => noise.push(`pageerror: ${error.message}`));
  await page.goto(url);
  if (ready) await untilReady(page);
  return page;
}

export const untilReady = (page: Page) => page.waitForSelector("body[data-ready=true]", { timeout: 15_000 });

export const listed = (page: Page, executionId: string, status: string) =>
  page.locator(`#executions button[data-execution="${executionId}"][data-status="${status}"]`);

/** Clicks "Run agent" and returns the new execution's id once it is listed as running. */
export async function runAgent(page: Page, prompt?: string): Promise<string> {
  if (prompt !== undefined) await page.fill("#prompt", prompt);
  await page.click("#run button[type=submit]");
  const id = await page
    .locator("#executions button[data-status=running]")
    .first()
    .getAttribute("data-execution", { timeout: 15_000 });
  if (!id) throw new Error("no running execution listed");
  return id;
}

/** Saves a screenshot of `page` to docs/img/tab-<name>.png when LOOM_SCREENSHOTS=1. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.LOOM_SCREENSHOTS !== "1") return;
  const dir = join(import.meta.dirname, "../../docs/img");
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `tab-${name}.png`), fullPage: true });
}
