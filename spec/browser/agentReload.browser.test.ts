// An agentLoop$ run entirely in a real headless Chromium on indexedDbStores: the tab is reloaded with a
// tool call in flight and the run resumes from IndexedDB with no recorded model or tool call re-run
// (counted in localStorage, which survives the reload, and in the test process); and a second tab of
// the origin cannot write the same execution: the Web Lock refuses it, and past the lock the seq fence does.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright-core";
import { EXECUTION_ENDED, STEP_COMPLETED } from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import type { AgentRun } from "./page/agent.js";
import { openHarnessPage, useBrowserHarness } from "./harness.js";

const harness = useBrowserHarness({ beforeAll, afterAll });
const noise: string[] = [];

const TURNS = 6;
const HELD_TURN = 4;
const HELD = `agent#turn:${HELD_TURN}:tool:0`;

function openPage(context: BrowserContext): Promise<Page> {
  return openHarnessPage(harness(), context, noise);
}

const run = (db: string, lock = false): AgentRun => ({ db, executionId: "run", turns: TURNS, lock });
const start = (page: Page, r: AgentRun) => page.evaluate((r) => window.loom.agent.start(r), r);
const resume = (page: Page, r: AgentRun) => page.evaluate((r) => window.loom.agent.resume(r), r);
const result = (page: Page, db: string) => page.evaluate((db) => window.loom.agent.result(db, "run"), db);
const journal = (page: Page, db: string) => page.evaluate((db) => window.loom.agent.log(db, "run"), db);
const calls = (page: Page, db: string) => page.evaluate((db) => window.loom.agent.calls(db), db);
const hold = (page: Page, stepId: string) => page.evaluate((id) => window.loom.agent.hold([id]), stepId);
const release = (page: Page, stepId: string) => page.evaluate((id) => window.loom.agent.release(id), stepId);
const untilHolding = (page: Page, stepId: string) =>
  page.waitForFunction((id) => window.loom.agent.holding().includes(id), stepId, { timeout: 10_000 });

const completedSteps = (log: StoredRecord[]) =>
  log.filter((r) => r.type === STEP_COMPLETED).map((r) => r.stepId as string);
const withoutTime = (log: StoredRecord[]) => log.map(({ at: _at, ...rest }) => rest);
const contiguous = (log: StoredRecord[]) => log.every((r, i) => r.seq === i + 1);

describe("an agent in headless Chromium on IndexedDB", () => {
  it("is reloaded mid-run and resumes from IndexedDB with no recorded model or tool call repeated", async () => {
    const page = await openPage(harness().context);

    // The same agent run uninterrupted, for the output and journal the resumed run must reproduce.
    expect(await start(page, run("reference"))).toEqual({ ok: true, value: null });
    const reference = await result(page, "reference");
    expect(reference).toEqual({
      ok: true,
      value: {
        text: `Done after ${TURNS} turns.`,
        turns: TURNS,
        transcriptBytes: expect.any(Number),
        sawTaintFrom: [],
      },
    });
    const referenceLog = await journal(page, "reference");

    // The run under test: its tool call at turn HELD_TURN never returns before the reload.
    await hold(page, HELD);
    expect(await start(page, run("reload", true))).toEqual({ ok: true, value: null });
    await untilHolding(page, HELD);
    const recorded = completedSteps(await journal(page, "reload"));
    expect(recorded).toHaveLength(2 * HELD_TURN + 1); // turns 0..HELD_TURN-1 (model + tool), and HELD_TURN's model
    expect(recorded).not.toContain(HELD);
    expect(await calls(page, "reload")).toEqual(Object.fromEntries([...recorded, HELD].map((id) => [id, 1])));

    await page.reload();
    await page.waitForFunction(() => window.loom?.ready === true);
    const replay = await resume(page, run("reload", true));
    // From the snapshot IndexedDB holds plus the log's tail; only the step in flight is left to run.
    expect(replay).toMatchObject({
      ok: true,
      value: { fromSnapshotSeq: expect.any(Number), stepsServedFromLog: expect.any(Number), stepsToRun: 1 },
    });
    expect(replay.ok && replay.value.fromSnapshotSeq).toBeGreaterThan(0);
    expect(replay.ok && replay.value.stepsServedFromLog).toBeGreaterThan(0);
    expect(await result(page, "reload")).toEqual(reference);

    // Every step ran once, but the one in flight at the reload: it had no outcome, so it ran again.
    const counted = await calls(page, "reload");
    const log = await journal(page, "reload");
    for (const id of recorded) expect(counted[id], `${id} was recorded before the reload`).toBe(1);
    expect(counted[HELD]).toBe(2);
    expect(Object.keys(counted).sort()).toEqual(completedSteps(log).sort());
    expect(Object.values(counted).reduce((a, b) => a + b, 0)).toBe(completedSteps(log).length + 1);
    // The same counts reached the test process, call by call, before each call ran.
    expect(harness().reports.callsOf("reload")).toEqual(counted);
    expect(contiguous(log)).toBe(true);
    expect(withoutTime(log)).toEqual(withoutTime(referenceLog));
  });

  it("lets a second tab of the origin not write the same execution: refused by the Web Lock, and past it by the seq fence", async () => {
    const context = harness().context;
    const [first, second] = [await openPage(context), await openPage(context)];
    await hold(first, HELD);
    expect(await start(first, run("two-tabs", true))).toEqual({ ok: true, value: null });
    await untilHolding(first, HELD);
    const head = (await journal(first, "two-tabs")).length;

    // The protocol: whoever runs an execution holds its writer lock; the second tab is refused at once.
    const refused = await resume(second, run("two-tabs", true));
    expect(refused).toMatchObject({ ok: false, error: { name: "WriterLockedError", code: "LOOM_WRITER_LOCKED" } });
    expect(refused.ok === false && refused.error.message).toContain("loomwork:two-tabs:run");
    expect(await journal(second, "two-tabs")).toHaveLength(head);

    // A tab that skips the lock still cannot fork the log: it writes first here, and the first tab's
    // next append (its held tool call returning) is refused with ConcurrencyError, which ends its run.
    await hold(second, HELD);
    expect(await resume(second, run("two-tabs"))).toMatchObject({ ok: true, value: { stepsToRun: 1 } });
    await untilHolding(second, HELD);
    await release(second, HELD);
    expect(await result(second, "two-tabs")).toMatchObject({ ok: true, value: { turns: TURNS } });
    await release(first, HELD);
    const lost = await result(first, "two-tabs");
    expect(lost).toMatchObject({ ok: false, error: { name: "ConcurrencyError", code: "LOOM_CONCURRENCY" } });

    const log = await journal(first, "two-tabs");
    expect(contiguous(log)).toBe(true);
    const steps = completedSteps(log);
    expect(new Set(steps).size).toBe(steps.length);
    expect(steps).toHaveLength(2 * TURNS - 1);
    expect(log.filter((r) => r.type === EXECUTION_ENDED)).toEqual([expect.objectContaining({ status: "done" })]);
  });

  it("printed nothing to the console", () => {
    harness();
    expect(noise).toEqual([]);
  });
});
