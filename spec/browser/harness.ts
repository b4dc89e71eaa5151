// Builds spec/browser/page with Vite, serves it on 127.0.0.1 (random port) and launches the
// system's headless Chromium through playwright-core. Never downloads a browser: CI installs
// Debian's `chromium` package (see .ci/run); a missing binary fails loudly, it is not skipped.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { build } from "vite";

export const CHROMIUM_PATH = process.env.LOOMWORK_CHROMIUM ?? "/usr/bin/chromium";
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
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `The browser specs need Chromium at ${CHROMIUM_PATH} and found none. Install it with ` +
        "`apt-get update && apt-get install -y chromium` (Debian), or set LOOMWORK_CHROMIUM to its path. " +
        "These specs never download a browser.",
    );
  }
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
    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
      ],
    });
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
