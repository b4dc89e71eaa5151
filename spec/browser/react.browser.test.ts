// loomwork/react and loomwork/bridge in real Chromium (Debian's /usr/bin/chromium via playwright-core).
// React: a tab runs an agent on IndexedDB and renders it with the hooks; it is reloaded mid-run, the
// execution resumes from IndexedDB (app.resumeUnfinished) with no completed call run again, and the
// hooks show the resumed actor to the end, with no React warning. A screenshot of the page after the
// reload is saved (to docs/img/react-reload.png with LOOMWORK_UPDATE_SCREENSHOTS=1).
// Bridge: the owner runs in a dedicated Worker, the page is the UI: it renders the remote actor and the
// owner's execution list, is refused an event allowSend does not allow, and approves a tool call.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { servePages, type ServedPages } from "./pages.js";

const ROOT = dirname(fileURLToPath(import.meta.url));
const CHECKOUT = join(ROOT, "..", "..");
let pages: ServedPages;
let browser: Browser;
let server: { url: string };

beforeAll(async () => {
  pages = await servePages(join(ROOT, "react"), {
    react: join(ROOT, "react", "react.html"),
    bridge: join(ROOT, "react", "bridge.html"),
  });
  ({ browser } = pages);
  server = { url: pages.url };
}, 180_000);

afterAll(() => pages?.close());

/** A page whose console errors, React warnings and uncaught errors are collected. */
async function open(path: string): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 700, height: 420 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => (m.type() === "error" || m.type() === "warning") && problems.push(m.text()));
  page.on("pageerror", (e) => problems.push(String(e)));
  await page.goto(`${server.url}${path}`);
  return { page, problems };
}

const stored = (page: Page, key: string) =>
  page.evaluate((k) => JSON.parse(localStorage.getItem(k) ?? "null") as unknown, key);

describe("loomwork/react in Chromium", () => {
  it("shows an execution that resumes from IndexedDB after a reload mid-run, to its end, with nothing completed run again", async () => {
    const { page, problems } = await open("react.html");
    // Mid-run: the search of turn 0 is journaled, turn 1 is under way.
    await page.waitForFunction(() => /turn 1\b/.test(document.querySelector("#state")?.textContent ?? ""), null, {
      timeout: 30_000,
    });
    await page.reload();
    await page.waitForSelector('#run[data-status="done"]', { timeout: 30_000 });
    expect(await page.evaluate(() => (window as unknown as { loomLoad: number }).loomLoad)).toBe(2);

    const first = (await stored(page, "ran:1")) as string[];
    const second = (await stored(page, "ran:2")) as string[];
    const replay = (await stored(page, "replay:2")) as { recordsReplayed: number; stepsServedFromLog: number };
    expect(first).toEqual(
      expect.arrayContaining(["digest#turn:0:model", "digest#turn:0:tool:0", "digest#turn:1:model"]),
    );
    expect(second).not.toContain("digest#turn:0:model");
    expect(second).not.toContain("digest#turn:0:tool:0");
    expect(second).toContain("digest#turn:2:model"); // the last turn ran after the reload
    expect(replay.stepsServedFromLog).toBeGreaterThanOrEqual(2);
    // Every step ran at least once, and only a step in flight at the reload ran twice.
    const all = [
      "digest#turn:0:model",
      "digest#turn:0:tool:0",
      "digest#turn:1:model",
      "digest#turn:1:tool:0",
      "digest#turn:1:tool:1",
      "digest#turn:2:model",
    ];
    expect([...new Set([...first, ...second])].sort()).toEqual(all.sort());
    expect(second.filter((id) => first.includes(id)).every((id) => id.startsWith("digest#turn:1:"))).toBe(true);

    expect(await page.textContent("#output")).toBe("Barn owls hunt by ear: they strike prey in total darkness.");
    expect(await page.textContent("#state")).toBe("state done · turn 2");
    expect(await page.textContent("#executions")).toBe("digest-1: done, 6 steps completed");
    expect(await page.textContent("#loads")).toMatch(
      new RegExp(
        `load 1: ${first.length} model/tool calls runload 2: resumed from IndexedDB, \\d+ records replayed, \\d+ steps served from the journal; ${second.length} model/tool calls run`,
      ),
    );
    expect(problems).toEqual([]);

    const shot = process.env.LOOMWORK_UPDATE_SCREENSHOTS
      ? join(CHECKOUT, "docs", "img", "react-reload.png")
      : join(pages.dir, "react-reload.png");
    expect((await page.screenshot({ path: shot, fullPage: true })).byteLength).toBeGreaterThan(1000);
  }, 120_000);
});

describe("loomwork/bridge in Chromium", () => {
  it("serves a Worker's execution to the page: snapshots, the execution list, a refused send and an approval", async () => {
    const { page, problems } = await open("bridge.html");
    await page.waitForSelector("#approve", { timeout: 30_000 }).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\npage: ${await page.content()}\nproblems: ${problems.join("\n")}`);
    });
    expect(await page.textContent("#status")).toBe("active · awaitingApproval");
    expect(await page.textContent("#pending")).toBe('read {"page":2}Approve');

    await page.click("#other");
    await page.waitForFunction(
      () => document.querySelector("#note")?.textContent === "refused: LOOM_BRIDGE_SEND",
      null,
      { timeout: 10_000 },
    );

    await page.click("#approve");
    await page.waitForSelector("#output", { timeout: 30_000 });
    expect(await page.textContent("#output")).toBe("Barn owls hunt by ear: they strike prey in total darkness.");
    expect(await page.textContent("#status")).toBe("done · done");
    await page.waitForFunction(() => document.querySelector("#executions")?.textContent === "digest-1: done", null, {
      timeout: 10_000,
    });
    expect(await page.textContent("#note")).toBe("TOOL_APPROVAL journaled by the owner");
    expect(problems).toEqual([]);
  }, 120_000);
});
