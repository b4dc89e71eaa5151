// Issue 36, the tab: the tab that runs an execution closes mid-run, and a tab of the same profile that was
// already open (so it only watched) takes over once the Web Lock is let go, resuming from the journal with
// no recorded call repeated. And a run parked on an approval, seen from the tab that only watches, says
// where to approve and lets the watcher decide (the decision goes to the tab that runs it).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { memoryStores } from "../../stores/memory.js";
import { DEFAULT_PROMPT, researchEffects, researchLoop } from "../../stories/browser-offline/agent.js";
import { lowestContrasts } from "./storyContrast.js";
import { listed, noise, openStory, runAgent, screenshot, serveStory, type ServedStory } from "./story.js";

let story: ServedStory;
beforeAll(async () => {
  story = await serveStory();
}, 120_000);
afterAll(() => story?.close());

async function uninterruptedAnswer(): Promise<string> {
  const app = createApp(defineConfig({ stores: memoryStores(), effects: researchEffects(0, () => undefined) }));
  await app.start(researchLoop, { executionId: "reference", input: { prompt: DEFAULT_PROMPT } });
  return ((await app.result("reference")) as { text: string }).text;
}

describe("the tab: another tab takes over (issue 36)", () => {
  it("a tab opened before the run takes it over when the owner tab closes mid-run: 0 recorded calls repeated", async () => {
    const context = await story.profile();
    const watcher = await openStory(context, `${story.url}?pace=400`);
    const owner = await openStory(context, `${story.url}?pace=400`);
    const executionId = await runAgent(owner);
    await owner.waitForFunction(() => document.querySelectorAll(".timeline [data-step]").length >= 2, undefined, {
      timeout: 15_000,
    });
    await listed(watcher, executionId, "running").getByText("running in another tab").waitFor({ timeout: 15_000 });

    await owner.close();
    // The watcher took over: it resumed the run from the journal and finished it.
    await watcher.locator("[data-testid=resumed]").getByText("Taken over").waitFor({ timeout: 15_000 });
    await listed(watcher, executionId, "done").waitFor({ timeout: 20_000 });
    await watcher.locator(`#executions button[data-execution="${executionId}"]`).click();
    await watcher.locator("[data-testid=answer]").waitFor({ timeout: 10_000 });
    expect(await watcher.locator("[data-testid=answer]").textContent()).toBe(await uninterruptedAnswer());
    expect(await watcher.locator("[data-testid=reruns]").textContent()).toBe("Recorded calls repeated: 0.");
    await screenshot(watcher, "takeover");
    expect(noise).toEqual([]);
  }, 90_000);

  it("a run parked on an approval, seen from another tab, says where to approve and takes the watcher's decision", async () => {
    const context = await story.profile();
    const owner = await openStory(context, `${story.url}?pace=100`);
    const watcher = await openStory(context, `${story.url}?pace=100`);
    const executionId = await runAgent(owner, `${DEFAULT_PROMPT} Then save it.`);
    await owner.locator("[data-testid=approval] button[data-approve]").waitFor({ timeout: 20_000 });

    await watcher.locator(`#executions button[data-execution="${executionId}"]`).click();
    const elsewhere = watcher.locator("[data-testid=approval]");
    await elsewhere.getByText("another tab").waitFor({ timeout: 15_000 });
    expect(await elsewhere.textContent()).toContain("save_note");
    await screenshot(watcher, "approval-elsewhere");
    await elsewhere.locator("button[data-approve]").click();
    await listed(owner, executionId, "done").waitFor({ timeout: 20_000 });
    await listed(watcher, executionId, "done").waitFor({ timeout: 20_000 });
    expect(await owner.locator("[data-testid=answer]").textContent()).toMatch(/Saved to your notebook\.$/);
    expect(noise).toEqual([]);
  }, 90_000);
});

describe("the tab: the banner says truthfully why a run resumed (issue 36)", () => {
  it("a page opened after the one running it closed says so, not 'after a reload'", async () => {
    const context = await story.profile();
    const first = await openStory(context, `${story.url}?pace=300`);
    const executionId = await runAgent(first);
    await first.waitForFunction(() => document.querySelectorAll(".timeline [data-step]").length >= 2, undefined, {
      timeout: 15_000,
    });
    await first.close();
    const next = await openStory(context, `${story.url}?pace=300`);
    const banner = next.locator("[data-testid=resumed]");
    await banner.waitFor({ timeout: 15_000 });
    expect(await banner.textContent()).toContain(
      "Resumed when this page opened (the page that ran it had closed or crashed).",
    );
    expect(await banner.textContent()).not.toContain("after a reload");
    await listed(next, executionId, "done").waitFor({ timeout: 20_000 });
    expect(await next.locator("[data-testid=reruns]").textContent()).toBe("Recorded calls repeated: 0.");
  }, 60_000);
});

describe("the tab: readable (issue 36)", () => {
  it("every text on the story page, muted text and pills included, has a contrast of 4.5:1 or more", async () => {
    const context = await story.profile();
    const page = await openStory(context, `${story.url}?pace=100`);
    await runAgent(page, `${DEFAULT_PROMPT} Then save it.`);
    await page.locator("[data-testid=approval] button[data-approve]").waitFor({ timeout: 20_000 });
    const lowest = await page.evaluate(lowestContrasts);
    expect(lowest[0]!.ratio, JSON.stringify(lowest, null, 1)).toBeGreaterThanOrEqual(4.5);
  }, 60_000);
});

describe("the tab: usable with a keyboard and a screen reader (issue 36)", () => {
  it("keeps focus across redraws, marks the selected run, announces, says 1 call, and respects reduced motion", async () => {
    const context = await story.profile();
    const page = await openStory(context, `${story.url}?pace=300`);
    await page.emulateMedia({ reducedMotion: "reduce" });
    // Every text the call counter shows, from the first call on.
    await page.evaluate(() => {
      const seen: string[] = ((window as unknown as { callTexts: string[] }).callTexts = []);
      const calls = document.querySelector("#calls")!;
      new MutationObserver(() => seen.push(calls.textContent!)).observe(calls, {
        childList: true,
        characterData: true,
        subtree: true,
      });
    });
    const executionId = await runAgent(page);
    const button = page.locator(`#executions button[data-execution="${executionId}"]`);
    expect(await button.getAttribute("aria-current")).toBe("true");
    await button.focus();
    // Redraws come with every record the run appends: focus stays on the same execution throughout.
    const head = async () => Number((await button.textContent())!.match(/(\d+) records?/)![1]);
    const before = await head();
    await expect.poll(head, { timeout: 15_000 }).toBeGreaterThan(before + 2);
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-execution"))).toBe(executionId);
    expect(
      await page.evaluate(() => getComputedStyle(document.querySelector(".pill.running")!, "::before").animationName),
    ).toBe("none");
    expect(await page.locator("#announce").getAttribute("aria-live")).toBe("polite");
    expect(await page.locator("#alerts").getAttribute("aria-live")).toBe("assertive");
    await listed(page, executionId, "done").waitFor({ timeout: 20_000 });
    expect(await page.locator("#announce").textContent()).toBe(`Execution ${executionId} finished.`);
    expect(await page.evaluate(() => (window as unknown as { callTexts: string[] }).callTexts)).toContain(
      "This page load: 1 model call, 0 tool calls",
    );
    expect(await page.locator("body").innerText()).not.toMatch(/\b1 (model|tool) calls\b|\b1 records\b/);
  }, 60_000);
});
