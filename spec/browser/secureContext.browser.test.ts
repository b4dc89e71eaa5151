// The harness page served over plain http on a LAN name (lan.test, mapped to 127.0.0.1 by the browser's
// resolver) is not a secure context, so Chromium gives it no crypto.subtle: the IndexedDB stores and
// createApp refuse at boot with InsecureContextError saying to serve over https or localhost, instead of
// the first run dying on "Cannot read properties of undefined (reading 'digest')". The same page on
// 127.0.0.1 (a secure context) opens as ever.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "./chromium.js";
import { useBrowserHarness } from "./harness.js";

const harness = useBrowserHarness({ beforeAll, afterAll });
const LAN_NAME = "lan.test";
let browser: Browser | undefined;

beforeAll(async () => {
  browser = await launchChromium([`--host-resolver-rules=MAP ${LAN_NAME} 127.0.0.1`]);
});
afterAll(async () => {
  await browser?.close();
});

async function open(url: string): Promise<Page> {
  if (!browser) throw new Error("the browser with the LAN name did not start");
  const page = await (await browser.newContext()).newPage();
  await page.goto(url);
  await page.waitForFunction(() => window.loom?.ready === true);
  return page;
}

describe("a page that is not a secure context (plain http on a LAN name)", () => {
  it("refuses indexedDbStores and createApp with InsecureContextError naming the page and the fix", async () => {
    const url = new URL(harness().url);
    url.hostname = LAN_NAME;
    const page = await open(url.href);
    expect(await page.evaluate(() => ({ secure: window.isSecureContext, subtle: typeof crypto.subtle }))).toEqual({
      secure: false,
      subtle: "undefined",
    });

    const stores = await page.evaluate(() => window.loom.settle(window.loom.stores("insecure")));
    expect(stores).toMatchObject({ ok: false, error: { name: "InsecureContextError", code: "LOOM_INSECURE_CONTEXT" } });
    const message = stores.ok ? "" : stores.error.message;
    expect(message).toContain("loomwork needs a secure context (https or localhost) for WebCrypto");
    expect(message).toContain(`this page: ${url.origin}`);
    expect(message).toContain("serve the page over https, or open it on localhost / 127.0.0.1");

    expect(await page.evaluate(() => window.loom.bootApp())).toMatchObject({
      ok: false,
      error: { name: "InsecureContextError", code: "LOOM_INSECURE_CONTEXT" },
    });
    // An agent run never starts, so it cannot die half-way on crypto.subtle.
    const run = await page.evaluate(() =>
      window.loom.agent.start({ db: "insecure-agent", executionId: "run", turns: 1 }),
    );
    expect(run).toMatchObject({ ok: false, error: { name: "InsecureContextError" } });
  });

  it("opens the stores and boots an app on 127.0.0.1, a secure context, in the same browser", async () => {
    const page = await open(harness().url);
    expect(await page.evaluate(() => window.isSecureContext)).toBe(true);
    expect(await page.evaluate(() => window.loom.settle(window.loom.stores("secure").then(() => null)))).toEqual({
      ok: true,
      value: null,
    });
    expect(await page.evaluate(() => window.loom.bootApp())).toEqual({ ok: true, value: null });
  });
});
