// Launches the system's headless Chromium (Debian's /usr/bin/chromium, or LOOMWORK_CHROMIUM) through
// playwright-core, with the flags CI uses, for specs that serve their own page (the story specs).
// Never downloads a browser; a missing binary fails with how to install it.
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { CHROMIUM_PATH } from "./harness.js";

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

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `The browser specs need Chromium at ${CHROMIUM_PATH} and found none. Install it with ` +
        "`apt-get update && apt-get install -y chromium` (Debian), or set LOOMWORK_CHROMIUM to its path. " +
        "These specs never download a browser.",
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
