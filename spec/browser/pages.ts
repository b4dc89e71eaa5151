// Test pages built with Vite, served from a temporary directory on 127.0.0.1, and the system's Chromium to open
// them: what the browser specs that build their own page share.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { build } from "vite";
import { serveStatic } from "../../stories/browser-offline/serve.js";
import { launchChromium } from "./chromium.js";

export interface ServedPages {
  /** The server's base url (ends with `/`). */
  readonly url: string;
  readonly browser: Browser;
  /** The build's directory (a test may write files beside the pages: screenshots). */
  readonly dir: string;
  /** Closes the browser and the server, and removes the build. */
  close(): Promise<void>;
}

/** Builds `inputs` (name to html file) under `root` with Vite (workers as ES modules), serves them, launches Chromium. */
export async function servePages(root: string, inputs: Record<string, string>): Promise<ServedPages> {
  const out = await mkdtemp(join(tmpdir(), "loomwork-page-"));
  await build({
    root,
    configFile: false,
    logLevel: "silent",
    build: {
      outDir: out,
      emptyOutDir: true,
      target: "es2022",
      reportCompressedSize: false,
      rollupOptions: { input: inputs },
    },
    worker: { format: "es" },
  });
  const server = await serveStatic(out, 0);
  const browser = await launchChromium();
  return {
    url: server.url,
    browser,
    dir: out,
    close: async () => {
      await browser.close();
      await server.close();
      await rm(out, { recursive: true, force: true });
    },
  };
}
