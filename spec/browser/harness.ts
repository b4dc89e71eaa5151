// Builds spec/browser/page with Vite, serves it on 127.0.0.1 (random port) and launches the
// system's headless Chromium through playwright-core on a persistent profile in a temporary directory,
// so IndexedDB is on disk as a user's browser keeps it (an incognito context would keep it in memory),
// and the browser can be SIGKILLed and relaunched on the same profile. Never downloads a browser: CI
// installs Debian's `chromium` package (see .ci/run); a missing binary fails loudly, it is not skipped.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BrowserContext, ConsoleMessage, Page } from "playwright-core";
import { build } from "vite";
import { serveStatic, type StaticServer } from "../../stories/browser-offline/serve.js";
import type { StoredRecord } from "../../stores/types.js";
import {
  assertChromium,
  chromiumGone,
  killChromium,
  launchProfile,
  type ChromiumKill,
  type ChromiumProcess,
} from "./chromium.js";
import type { PageReport } from "./page/agent.js";

const PAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), "page");

/** What the harness page reported to this process (through the `loomReport` binding), across launches. */
export class PageReports {
  /** Live model and tool calls per database and step id, counted before each call runs. */
  readonly calls = new Map<string, Record<string, number>>();
  /** Records the page saw acknowledged (its app's "append" event), per database and execution, in order. */
  readonly acks = new Map<string, StoredRecord[]>();
  private readonly appends = new Map<string, number>();
  private readonly listeners = new Set<(report: PageReport) => void>();

  callsOf(db: string): Record<string, number> {
    return { ...this.calls.get(db) };
  }

  acksOf(db: string, executionId: string): StoredRecord[] {
    return [...(this.acks.get(`${db}/${executionId}`) ?? [])];
  }

  /** How many appends the page saw acknowledged (one "append" event each). */
  appendsOf(db: string, executionId: string): number {
    return this.appends.get(`${db}/${executionId}`) ?? 0;
  }

  /** Calls `listener` (synchronously, before the page's call resumes) with every later report. */
  on(listener: (report: PageReport) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  record(report: PageReport): void {
    if (report.kind === "call") {
      const calls = this.calls.get(report.db) ?? {};
      calls[report.stepId] = (calls[report.stepId] ?? 0) + 1;
      this.calls.set(report.db, calls);
    } else {
      const key = `${report.db}/${report.executionId}`;
      this.acks.set(key, [...(this.acks.get(key) ?? []), ...report.records]);
      this.appends.set(key, (this.appends.get(key) ?? 0) + 1);
    }
    for (const listener of this.listeners) listener(report);
  }
}

export interface BrowserHarness {
  /** The page's URL, on 127.0.0.1: a secure context, so Web Locks and WebCrypto exist. */
  url: string;
  /** The user data directory every launch of this harness runs on. */
  profileDir: string;
  /** The persistent context of the current launch (a new object after `relaunch`). */
  readonly context: BrowserContext;
  reports: PageReports;
  /**
   * SIGKILLs the browser: its main process and every child at once (`"all"`, the default), or only the
   * main process (`"browser"`); synchronous, so it can be called from a report listener while the page
   * waits on it. Returns the processes it killed.
   */
  kill(what?: ChromiumKill): ChromiumProcess[];
  /** Launches Chromium again on the same profile: after `kill` (once every process is gone), or after closing it. */
  relaunch(): Promise<BrowserContext>;
  /** How long the last killed browser's processes took to be gone, in ms (measured by `relaunch`). */
  readonly lastExitMs: number;
  close(): Promise<void>;
}

export async function startBrowserHarness(): Promise<BrowserHarness> {
  assertChromium();
  const outDir = await mkdtemp(join(tmpdir(), "loomwork-browser-page-"));
  const profileDir = await mkdtemp(join(tmpdir(), "loomwork-browser-profile-"));
  const reports = new PageReports();
  let server: StaticServer | undefined;
  let context: BrowserContext | undefined;
  let killed = false;
  let lastExitMs = 0;
  const launch = async () => {
    const launched = await launchProfile(profileDir);
    await launched.exposeBinding("loomReport", (_source, report: PageReport) => reports.record(report));
    return launched;
  };
  const removeDirs = () =>
    Promise.all([rm(outDir, { recursive: true, force: true }), rm(profileDir, { recursive: true, force: true })]);
  try {
    await build({
      root: PAGE_ROOT,
      configFile: false,
      logLevel: "silent",
      build: { outDir, emptyOutDir: true, minify: false, target: "es2022", reportCompressedSize: false },
    });
    server = await serveStatic(outDir);
    context = await launch();
  } catch (error) {
    await server?.close();
    await removeDirs();
    throw error;
  }
  const running = { server, context };
  return {
    url: `${server.url}index.html`,
    profileDir,
    reports,
    get context() {
      return running.context;
    },
    kill(what) {
      killed = true;
      return killChromium(profileDir, what);
    },
    async relaunch() {
      // After a SIGKILL, the children left (if only the main process was killed) exit on their own before
      // the context is closed: closing it first would have playwright SIGKILL their process group.
      if (killed) lastExitMs = await chromiumGone(profileDir);
      await running.context.close().catch((error: unknown) => {
        if (!killed) throw error;
      });
      await chromiumGone(profileDir);
      killed = false;
      running.context = await launch();
      return running.context;
    },
    get lastExitMs() {
      return lastExitMs;
    },
    async close() {
      await running.context.close().catch(() => undefined);
      await running.server.close();
      await removeDirs();
    },
  };
}

/**
 * Starts the harness once for a spec file. A harness that failed to start (no Chromium, a build error)
 * fails every test with its message: a failed beforeAll would only mark them skipped.
 */
export function useBrowserHarness(hooks: {
  beforeAll: (fn: () => Promise<void>) => void;
  afterAll: (fn: () => Promise<void>) => void;
}): () => BrowserHarness {
  let launched: BrowserHarness | Error | undefined;
  hooks.beforeAll(async () => {
    launched = await startBrowserHarness().catch((error: unknown) =>
      error instanceof Error ? error : new Error(String(error)),
    );
  });
  hooks.afterAll(async () => {
    if (launched && !(launched instanceof Error)) await launched.close();
  });
  return () => {
    if (launched instanceof Error) throw launched;
    if (!launched) throw new Error("the browser harness has not started");
    return launched;
  };
}

/** Opens the harness page in `context`, collecting every console message and page error into `noise`. */
export async function openHarnessPage(
  harness: BrowserHarness,
  context: BrowserContext,
  noise: string[],
): Promise<Page> {
  const page = await context.newPage();
  page.on("console", (message: ConsoleMessage) => noise.push(`console.${message.type()}: ${message.text()}`));
  page.on("pageerror", (error) => noise.push(`pageerror: ${error.message}`));
  await page.goto(harness.url);
  await page.waitForFunction(() => window.loom?.ready === true);
  return page;
}
