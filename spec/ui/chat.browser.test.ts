// The docs/react.md chat in real Chromium (Debian's /usr/bin/chromium via playwright-core): useChat from
// @ai-sdk/react 4 over AgentChatTransport and an agent on IndexedDB in the tab. A message starts the agent;
// its two calls that need a human show Approve and Deny (the AI SDK's approval parts); one approved and one
// denied, useChat sends the answers by itself (lastAssistantMessageIsCompleteWithApprovalResponses), the
// approved call runs, the denied one ends output-denied, and the same message ends with the answer. The
// tainted search shows its origin. Screenshots are saved, parked and at the end (to docs/img/react-chat-ask.png
// and docs/img/react-chat.png with LOOMWORK_UPDATE_SCREENSHOTS=1).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { servePages, type ServedPages } from "../browser/pages.js";

const ROOT = dirname(fileURLToPath(import.meta.url));
const CHECKOUT = join(ROOT, "..", "..");
let pages: ServedPages;
let browser: Browser;
let server: { url: string };

beforeAll(async () => {
  pages = await servePages(join(ROOT, "chat"), { chat: join(ROOT, "chat", "chat.html") });
  ({ browser } = pages);
  server = { url: pages.url };
}, 180_000);

afterAll(() => pages?.close());

describe("useChat over AgentChatTransport in Chromium", () => {
  it("asks, takes an approval and a denial through the AI SDK's approval parts, and finishes the message", async () => {
    const context = await browser.newContext({ viewport: { width: 720, height: 560 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (m) => (m.type() === "error" || m.type() === "warning") && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(String(e)));
    await page.goto(`${server.url}chat.html`);
    await page.click("#send");
    await page.waitForSelector("#c_notes .approve", { timeout: 30_000 }).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\npage: ${await page.content()}\nproblems: ${problems.join("\n")}`);
    });
    expect(await page.getAttribute("#chat", "data-status")).toBe("ready");
    expect(await page.textContent("#c_old .state")).toBe("approval-requested");
    expect(await page.textContent("#c_tmp .state")).toBe("output-available");
    expect(await page.textContent("#c_search .taint")).toBe("untrusted: from mcp:files");
    const asked = process.env.LOOMWORK_UPDATE_SCREENSHOTS
      ? join(CHECKOUT, "docs", "img", "react-chat-ask.png")
      : join(pages.dir, "react-chat-ask.png");
    expect((await page.screenshot({ path: asked, fullPage: true })).byteLength).toBeGreaterThan(1000);

    await page.click("#c_notes .deny");
    await page.click("#c_old .approve");
    await page.waitForFunction(() => /kept your notes/.test(document.querySelector("#chat")?.textContent ?? ""), null, {
      timeout: 30_000,
    });
    await page.waitForSelector('#chat[data-status="ready"]', { timeout: 30_000 });
    expect(await page.textContent("#c_notes .state")).toBe("output-denied");
    expect(await page.textContent("#c_old .state")).toBe("output-available");
    expect(await page.locator("section.assistant").count()).toBe(1);
    expect(await page.evaluate(() => (window as unknown as { ran: string[] }).ran)).toEqual([
      "search safe to delete",
      "rm /tmp/cache",
      "rm /home/me/old",
    ]);
    // Every chunk useChat read passed ai 7's chunk schema, in the page.
    const chunks = await page.evaluate(
      () => (window as unknown as { chunks: { types: string[]; refused: string[] } }).chunks,
    );
    expect(chunks.refused).toEqual([]);
    expect(chunks.types).toEqual(
      expect.arrayContaining([
        "start",
        "tool-approval-request",
        "tool-approval-response",
        "tool-output-denied",
        "finish",
      ]),
    );
    expect(problems).toEqual([]);

    const shot = process.env.LOOMWORK_UPDATE_SCREENSHOTS
      ? join(CHECKOUT, "docs", "img", "react-chat.png")
      : join(pages.dir, "react-chat.png");
    expect((await page.screenshot({ path: shot, fullPage: true })).byteLength).toBeGreaterThan(1000);
    await context.close();
  }, 120_000);
});
