// Agents that delegate in real headless Chromium (issue 34, "Crashes"): the tree of agents on IndexedDB with a real AI
// SDK provider against the loopback server; the tab is reloaded with one researcher's answer stream in flight and the
// other researcher's search held open, and the reloaded page resumes the tree from IndexedDB: the uninterrupted
// answer, and no model or tool call with a recorded outcome runs again.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentOf, questionOf, treeReply, TREE_ANSWER } from "../support/agentTree.js";
import { startOpenAiServer, type OpenAiServer } from "../support/openaiServer.js";
import { openHarnessPage, useBrowserHarness } from "./harness.js";

const harness = useBrowserHarness({ beforeAll, afterAll });
const noise: string[] = [];
const DB = "agent-tree-reload";
let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("a tree of agents in headless Chromium on IndexedDB", () => {
  it("is reloaded mid-tree and resumed: the same answer, no recorded call of any agent run again", async () => {
    let heldOnce = false;
    server = await startOpenAiServer((request) => {
      const turn = treeReply(request);
      // The owls researcher's answer is held open once: a model call in flight at the reload.
      const owlsAnswer =
        agentOf(request) === "researcher" &&
        questionOf(request) === "owls" &&
        request.body.messages.some((m) => m.role === "tool");
      if (owlsAnswer && !heldOnce && !("status" in turn)) {
        heldOnce = true;
        return { ...turn, holdAfterChunks: 1 };
      }
      return turn;
    });
    const baseURL = server.baseURL;
    const page = await openHarnessPage(harness(), harness().context, noise);
    await page.evaluate(() => window.loom.agentTree.hold("bats"));
    expect(await page.evaluate(([db, url]) => window.loom.agentTree.start(db!, url!), [DB, baseURL])).toEqual({
      ok: true,
      value: null,
    });
    await page.waitForFunction(() => window.loom.agentTree.holding(), undefined, { timeout: 20_000 });
    await server.held();

    await page.reload();
    await page.waitForFunction(() => window.loom?.ready === true, undefined, { timeout: 20_000 });
    const recorded = (await page.evaluate((db) => window.loom.agentTree.recorded(db), DB)) as { value: string[] };
    const before = await page.evaluate((db) => window.loom.agentTree.runs(db), DB);
    const resumed = (await page.evaluate(([db, url]) => window.loom.agentTree.resumeAll(db!, url!), [DB, baseURL])) as {
      ok: boolean;
      value: string[];
    };
    expect(resumed.ok).toBe(true);
    expect(resumed.value.sort()).toEqual(["tree", "tree/tool:0:0", "tree/tool:0:1"]);
    expect(await page.evaluate(([db, url]) => window.loom.agentTree.result(db!, url!), [DB, baseURL])).toMatchObject({
      ok: true,
      value: { text: TREE_ANSWER, lastAgent: "writer" },
    });
    const after = (await page.evaluate((db) => window.loom.agentTree.runs(db), DB)).slice(before.length);
    // What was in flight ran again; nothing recorded did.
    expect(after).toEqual(
      expect.arrayContaining(["tree/tool:0:0 researcher#turn:1:model", "tree/tool:0:1 researcher#turn:0:tool:0"]),
    );
    expect(after.filter((run) => recorded.value.includes(run))).toEqual([]);
    expect(noise.filter((n) => n.startsWith("pageerror"))).toEqual([]);
    await page.close();
  }, 120_000);
});
