// Launches the system's headless Chromium (Debian's /usr/bin/chromium, or LOOMWORK_CHROMIUM) through
// playwright-core, with the flags CI uses, for specs that serve their own page (the story specs).
// Never downloads a browser; a missing binary fails with how to install it.
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
];

export const CHROMIUM_PATH = process.env.LOOMWORK_CHROMIUM ?? "/usr/bin/chromium";

/** Fails, saying how to install it, when the system Chromium is missing. */
export function assertChromium(): void {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `The browser specs need Chromium at ${CHROMIUM_PATH} and found none. Install it with ` +
        "`apt-get update && apt-get install -y chromium` (Debian), or set LOOMWORK_CHROMIUM to its path. " +
        "These specs never download a browser.",
    );
  }
}

export async function launchChromium(): Promise<Browser> {
  assertChromium();
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
