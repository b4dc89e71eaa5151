// loomwork/devtools in real Chromium (Debian's /usr/bin/chromium via playwright-core), with no network:
// - `loomwork devtools --dir` beside a running app that serves its control socket: the research agent (scripted
//   model) at a past seq with its context, again after a reload; a plain machine (nested and parallel states)
//   followed live; a parked tool call approved from the page through the app; keyboard navigation; axe-core.
// - `mountDevtools` in an app's own page over its IndexedDB stores, before and after a reload.
// Screenshots go to docs/img/devtools-*.png with LOOMWORK_UPDATE_SCREENSHOTS=1.
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fsStores, serveControl, type FsStores } from "../../adapters/fs/index.js";
import { createApp, createToolEffect, defineConfig, type App, type JournaledActor } from "../../index.js";
import { RESEARCH_QUESTION, researchAgent, researchEffects } from "../../stories/support/researchAgent.js";
import { spawnCli, type RunningCli } from "../cli/support.js";
import { parent } from "../children/machines.js";
import { kettle, runKettle, tidy, tidyEffects } from "../devtools/machines.js";
import { servePages, type ServedPages } from "./pages.js";

const ROOT = dirname(fileURLToPath(import.meta.url));
const IMG = join(ROOT, "..", "..", "docs", "img");
const SHOTS = process.env.LOOMWORK_UPDATE_SCREENSHOTS === "1";
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

let dir: string;
let stores: FsStores;
let app: App;
let kettleActor: JournaledActor;
let control: { close(): Promise<void> };
let devtools: RunningCli;
let url: string;
let pages: ServedPages;
let browser: Browser;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "loomwork-devtools-"));
  stores = await fsStores({ dir });
  app = createApp(
    defineConfig({
      stores,
      effects: {
        ...researchEffects({ modelMs: 1, toolMs: 1 }),
        ...tidyEffects(),
        double: createToolEffect(async (n: number) => n * 2),
      },
      logics: [researchAgent, kettle, tidy, parent],
    }),
  );
  await app.start(researchAgent, { executionId: "research-1", input: { prompt: RESEARCH_QUESTION } });
  await app.result("research-1");
  await runKettle(app, "kettle-1");
  kettleActor = await app.resume("kettle-1");
  await app.start(tidy, { executionId: "tidy-1", input: { prompt: "Archive the paid invoices." } });
  await app.start(parent, { executionId: "tree-1" });
  await app.result("tree-1");
  control = await serveControl(app, { dir: stores.dir });
  devtools = spawnCli(["devtools", "--dir", dir, "--logic", "spec/devtools/machines.ts", "--poll-ms", "250"]);
  await devtools.waitFor(/devtools on http:\/\/127\.0\.0\.1:\d+\//, 60_000);
  url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(devtools.stdout)![1]!;
  pages = await servePages(join(ROOT, "devtools"), { mounted: join(ROOT, "devtools", "mounted.html") });
  browser = pages.browser;
}, 240_000);

afterAll(async () => {
  devtools?.kill();
  expect(await devtools?.exited).toBe(0);
  await control?.close();
  await app?.close();
  await stores?.close();
  await pages?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A page whose console errors and uncaught errors are collected. */
async function open(at: string, options: { bypassCSP?: boolean } = {}): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, ...options });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
  page.on("pageerror", (e) => problems.push(String(e)));
  // Nothing is fetched from anywhere but the page's own server.
  const origin = new URL(at).origin;
  page.on("request", (r) => {
    if (!r.url().startsWith(`${origin}/`) && !r.url().startsWith("data:")) problems.push(`request to ${r.url()}`);
  });
  await page.goto(at);
  return { page, problems };
}

const status = (page: Page) => page.locator(".loom-devtools [role=status]");
const shown = async (page: Page, text: string) =>
  page.waitForFunction(
    (t) => document.querySelector(".loom-devtools [role=status]")?.textContent?.includes(t) === true,
    text,
    { timeout: 30_000 },
  );

async function axe(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const result = await (
      window as unknown as { axe: { run(): Promise<{ violations: { id: string; nodes: unknown[] }[] }> } }
    ).axe.run();
    return result.violations.map((v) => `${v.id} (${v.nodes.length})`);
  });
  return violations;
}

const shot = async (page: Page, name: string) => {
  if (SHOTS) await page.screenshot({ path: join(IMG, `devtools-${name}.png`), fullPage: true });
};

describe("loomwork devtools --dir, beside a running app", () => {
  it("shows the research agent's statechart, and its state and context at a past seq, again after a reload", async () => {
    const { page, problems } = await open(`${url}#research-1`);
    await shown(page, "research-1 at seq");
    await expect.poll(() => status(page).textContent()).toMatch(/, done$/);
    expect(await page.locator(".loom-chart-section p").first().textContent()).toBe(
      "Drawn from the machine's definition.",
    );
    expect(await page.locator("[data-state]").count()).toBeGreaterThan(3);
    // Time travel: the third macrostep, picked from the list.
    const third = page.locator(".loom-steps button").nth(2);
    const label = (await third.textContent())!;
    const seq = Number(/^#(\d+)/.exec(label)![1]);
    await third.click();
    await expect.poll(() => third.getAttribute("aria-current")).toBe("step");
    await shown(page, `research-1 at seq`);
    const context = await page.locator("pre[aria-label=Context]").textContent();
    expect(context).toContain('"turn"');
    expect(page.url()).toMatch(/#research-1@\d+$/);
    const traveled = Number(/@(\d+)$/.exec(page.url())![1]);
    expect(traveled).toBeGreaterThanOrEqual(seq);
    await shot(page, "research-past");

    await page.reload();
    await shown(page, `research-1 at seq ${traveled} of`);
    expect(await page.locator(".loom-steps button[aria-current=step]").textContent()).toBe(label);
    expect(await page.locator("pre[aria-label=Context]").textContent()).toBe(context);
    expect(problems).toEqual([]);
  }, 120_000);

  it("follows a plain machine live: nested and parallel states, focus kept across the redraw", async () => {
    const { page, problems } = await open(`${url}#kettle-1`);
    await shown(page, "kettle-1 at seq 9 of 9: pouring.cup.filling, pouring.lid.open");
    expect(await page.locator("[data-state='kettle.pouring'].loom-active").count()).toBe(1);
    expect(await page.locator("[data-state='kettle.pouring.cup.filling'].loom-active").count()).toBe(1);
    expect(await page.locator("[data-state='kettle.heating'].loom-active").count()).toBe(0);
    await page.locator("[data-key=live]").focus();
    kettleActor.send({ type: "DONE" });
    await shown(page, "pouring.cup.full, pouring.lid.open");
    expect(await page.locator("[data-state='kettle.pouring.cup.full'].loom-active").count()).toBe(1);
    expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.key)).toBe("live");
    await shot(page, "kettle-live");
    expect(problems).toEqual([]);
  }, 120_000);

  it("is driven by the keyboard: Tab reaches every control, with a visible focus; arrows travel by seq", async () => {
    const { page } = await open(`${url}#kettle-1`);
    await shown(page, "kettle-1 at seq");
    const reached: string[] = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      const focus = await page.evaluate(() => {
        const a = document.activeElement as HTMLElement | null;
        return {
          key: a?.dataset.key ?? a?.getAttribute("aria-label") ?? a?.tagName,
          inside: a?.closest(".loom-devtools") !== null,
          outline: a ? getComputedStyle(a).outlineStyle : "",
        };
      });
      if (!focus.inside) break; // past the last control: focus leaves the page
      reached.push(String(focus.key));
      expect(`${focus.key}: ${focus.outline}`).not.toMatch(/: none$/);
    }
    expect(reached).toEqual(
      expect.arrayContaining(["exec:research-1", "exec:kettle-1", "exec:tidy-1", "seq", "live", "step:1"]),
    );
    await page.locator("[data-key=seq]").focus();
    await page.keyboard.press("Home");
    await shown(page, "kettle-1 at seq 1 of");
    expect(await page.locator(".loom-steps button[aria-current=step]").textContent()).toMatch(/^#1–2 started kettle/);
    expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.key)).toBe("seq");
    await page.keyboard.press("End");
    await shown(page, "kettle-1 at seq ");
  }, 120_000);

  it("respects prefers-reduced-motion: the highlight changes without a transition", async () => {
    const duration = async (reducedMotion: "reduce" | "no-preference") => {
      const context = await browser.newContext({ reducedMotion });
      const page = await context.newPage();
      await page.goto(`${url}#kettle-1`);
      await page.waitForSelector("[data-state='kettle.pouring'] > rect");
      const value = await page.evaluate(
        () => getComputedStyle(document.querySelector("[data-state='kettle.pouring'] > rect")!).transitionDuration,
      );
      await context.close();
      return value;
    };
    expect(await duration("no-preference")).toBe("0.16s, 0.16s");
    expect(await duration("reduce")).toBe("0s");
  }, 120_000);

  it("approves a parked tool call from the page, through the app's control socket", async () => {
    const { page, problems } = await open(`${url}#tidy-1`);
    await shown(page, "1 waiting for approval");
    const approve = page.getByRole("button", { name: "Approve archive" });
    await approve.waitFor();
    await shot(page, "approval");
    await approve.focus();
    await page.keyboard.press("Enter");
    expect(await app.result("tidy-1")).toMatchObject({ text: "Archived billing.eml." });
    await shown(page, "tidy-1 at seq");
    await expect.poll(() => status(page).textContent(), { timeout: 30_000 }).toMatch(/, done$/);
    expect(await page.locator(".loom-approvals h2").textContent()).toBe("Waiting for approval (0)");
    expect(problems).toEqual([]);
  }, 120_000);

  it("shows the tree of executions: a child execution under its parent, with the machine it runs", async () => {
    const { page, problems } = await open(`${url}#tree-1`);
    await shown(page, "tree-1 at seq");
    // The child is listed inside its parent's item, under the child id the parent invoked it by.
    const child = page.locator(".loom-tree li:has(> [data-key='exec:tree-1']) > ul [data-key='exec:tree-1/w']");
    await child.waitFor();
    expect(await child.textContent()).toBe("w tree-1/w");
    expect(await page.locator("[data-state='parent.running'] .loom-invoke").textContent()).toBe("child worker");
    expect(await page.locator("pre[aria-label=Context]").textContent()).toContain('"doubled": 42');
    await shot(page, "tree");
    await child.click();
    await shown(page, "tree-1/w at seq");
    expect(await page.locator(".loom-chart-section h2").textContent()).toBe("Statechart of worker");
    expect(problems).toEqual([]);
  }, 120_000);

  it("passes axe-core with no violations", async () => {
    for (const at of [`${url}#research-1@5`, `${url}#kettle-1`]) {
      const { page } = await open(at, { bypassCSP: true });
      await page.waitForSelector(".loom-state");
      await shown(page, "at seq");
      expect(await axe(page)).toEqual([]);
    }
  }, 120_000);
});

describe("mountDevtools in an app's page, over its IndexedDB stores", () => {
  it("shows its own machines offline, decides an approval through the app, and again after a reload", async () => {
    const { page, problems } = await open(`${pages.url}mounted.html`, { bypassCSP: true });
    await page.waitForFunction(() => (window as unknown as { loomReady?: boolean }).loomReady === true, undefined, {
      timeout: 30_000,
    });
    await shown(page, "kettle-1 at seq 9 of 9: pouring.cup.filling, pouring.lid.open");
    expect(await page.locator("pre[aria-label=Context]").textContent()).toContain('"cups": 1');
    expect(await axe(page)).toEqual([]);
    await shot(page, "mounted");
    await page.getByRole("button", { name: "tidy-1" }).click();
    await shown(page, "1 waiting for approval");
    await page.getByRole("button", { name: "Approve archive" }).click();
    await expect.poll(() => status(page).textContent(), { timeout: 30_000 }).toMatch(/^tidy-1 .*, done$/);

    await page.reload();
    await page.waitForFunction(() => (window as unknown as { loomReady?: boolean }).loomReady === true, undefined, {
      timeout: 30_000,
    });
    await shown(page, "kettle-1 at seq 9 of 9");
    await page.getByRole("button", { name: "tidy-1" }).click();
    await expect.poll(() => status(page).textContent(), { timeout: 30_000 }).toMatch(/^tidy-1 .*, done$/);
    expect(problems).toEqual([]);
  }, 120_000);
});
