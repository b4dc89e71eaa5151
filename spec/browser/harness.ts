// Builds spec/browser/page with Vite, serves it on 127.0.0.1 (random port) and launches the
// system's headless Chromium through playwright-core. Never downloads a browser: CI installs
// Debian's `chromium` package (see .ci/run); a missing binary fails loudly, it is not skipped.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, ConsoleMessage, Page } from "playwright-core";
import { build } from "vite";
import { assertChromium, launchChromium } from "./chromium.js";

const PAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), "page");
const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
};

export interface BrowserHarness {
  /** The page's URL, on 127.0.0.1: a secure context, so Web Locks and WebCrypto exist. */
  url: string;
  browser: Browser;
  close(): Promise<void>;
}

export async function startBrowserHarness(): Promise<BrowserHarness> {
  assertChromium();
  const outDir = await mkdtemp(join(tmpdir(), "loomwork-browser-page-"));
  let server: Server | undefined;
  let browser: Browser | undefined;
  try {
    await build({
      root: PAGE_ROOT,
      configFile: false,
      logLevel: "silent",
      build: { outDir, emptyOutDir: true, minify: false, target: "es2022", reportCompressedSize: false },
    });
    server = await serve(outDir);
    browser = await launchChromium();
  } catch (error) {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await rm(outDir, { recursive: true, force: true });
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const running = { server, browser };
  return {
    url: `http://127.0.0.1:${port}/index.html`,
    browser: running.browser,
    async close() {
      await running.browser.close();
      await new Promise((resolve) => running.server.close(resolve));
      await rm(outDir, { recursive: true, force: true });
    },
  };
}

/** A static file server for the built page, confined to `root`. */
function serve(root: string): Promise<Server> {
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://localhost").pathname);
    const file = normalize(join(root, path === "/" ? "index.html" : path));
    if (!file.startsWith(root + sep)) {
      response.writeHead(403).end();
      return;
    }
    readFile(file).then(
      (body) => response.writeHead(200, { "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream" }).end(body),
      () => response.writeHead(404).end(),
    );
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

/**
 * Starts the harness once for a spec file. A harness that failed to start (no Chromium, a build error)
 * fails every test with its message: a failed beforeAll would only mark them skipped.
 */
export function useBrowserHarness(hooks: { beforeAll: (fn: () => Promise<void>) => void; afterAll: (fn: () => Promise<void>) => void }): () => BrowserHarness {
  let launched: BrowserHarness | Error | undefined;
  hooks.beforeAll(async () => {
    launched = await startBrowserHarness().catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
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
export async function openHarnessPage(harness: BrowserHarness, context: BrowserContext, noise: string[]): Promise<Page> {
  const page = await context.newPage();
  page.on("console", (message: ConsoleMessage) => noise.push(`console.${message.type()}: ${message.text()}`));
  page.on("pageerror", (error) => noise.push(`pageerror: ${error.message}`));
  await page.goto(harness.url);
  await page.waitForFunction(() => window.loom?.ready === true);
  return page;
}
