// A real AI SDK provider in real headless Chromium: the agent (on IndexedDB) streams from the test's
// loopback OpenAI-compatible server; the tab is reloaded mid-stream and the resumed page's stream shows the
// recorded turn from the journal and the in-flight one live from its start; an approval parks the agent, the
// tab is reloaded, and a click on the page's Approve button finishes the run.
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { StreamPart } from "../../actors/agents/streams.js";
import { byTurn, startOpenAiServer, type OpenAiServer, type ServerTurn } from "../support/openaiServer.js";
import type { RealModelRun } from "./page/realModel.js";
import { openHarnessPage, useBrowserHarness } from "./harness.js";

const harness = useBrowserHarness({ beforeAll, afterAll });
const noise: string[] = [];
let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ANSWER = "Barn owls hunt by ear, striking within a degree in complete darkness.";
const start = (page: Page, r: RealModelRun) => page.evaluate((r) => window.loom.realModel.start(r), r);
const resume = (page: Page, r: RealModelRun) => page.evaluate((r) => window.loom.realModel.resume(r), r);
const result = (page: Page, r: RealModelRun) => page.evaluate((r) => window.loom.realModel.result(r), r);
const streamed = (page: Page, r: RealModelRun) => page.evaluate((r) => window.loom.realModel.streamed(r), r);
const parts = (page: Page) => page.evaluate(() => window.loom.realModel.parts()) as Promise<StreamPart[]>;
const reload = async (page: Page) => {
  await page.reload();
  await page.waitForFunction(() => window.loom?.ready === true);
};

describe("a real provider in headless Chromium", () => {
  it("is reloaded mid-stream; the resumed stream shows the recorded turn and the in-flight one from its start", async () => {
    const turns: ServerTurn[] = [
      { toolCalls: [{ id: "call_s", name: "search", arguments: '{"q":"barn owls"}' }] },
      { text: ANSWER, chunkChars: 4 },
    ];
    let turnOne = 0;
    server = await startOpenAiServer((request) =>
      request.turn === 1 && turnOne++ === 0 ? { ...turns[1]!, holdAfterChunks: 6 } : byTurn(turns)(request),
    );
    const run: RealModelRun = { db: "real-stream", baseURL: server.baseURL, executionId: "s" };
    const page = await openHarnessPage(harness(), harness().context, noise);
    expect(await start(page, run)).toEqual({ ok: true, value: null });
    await page.waitForFunction(
      () => window.loom.realModel.parts().some((p) => p.type === "text-delta" && p.stepId === "browser#turn:1:model"),
      undefined,
      { timeout: 15_000 },
    );
    const before = await parts(page);
    expect(before.filter((p) => p.type === "text-delta").length).toBeGreaterThan(0);
    await server.held();

    await reload(page); // mid-stream: turn 1 is in flight
    expect(await resume(page, run)).toEqual({ ok: true, value: null });
    expect(await result(page, run)).toMatchObject({ ok: true, value: { text: ANSWER, turns: 2 } });
    // The run's end says nothing of the stream's progress: its parts are read once it has delivered them all.
    await streamed(page, run);
    const after = await parts(page);
    expect(after.filter((p) => p.stepId === "browser#turn:0:model").map((p) => p.type)).toEqual([
      "start-step",
      "tool-call",
      "finish-step",
    ]);
    expect(after.find((p) => p.type === "tool-result")).toMatchObject({
      id: "call_s",
      output: { hits: ["barn owls: by sound"] },
    });
    expect(
      after
        .filter((p) => p.stepId === "browser#turn:1:model" && p.type === "text-delta")
        .map((p) => p.delta)
        .join(""),
    ).toBe(ANSWER);
    expect(await page.evaluate(() => window.loom.realModel.toolRuns())).toEqual([]); // the search ran before the reload only
    expect(server.requests.map((r) => r.turn)).toEqual([0, 1, 1]);
    await page.close();
  });

  it("parks for approval, survives a reload, and finishes on a click of Approve", async () => {
    server = await startOpenAiServer(
      byTurn([
        { toolCalls: [{ id: "call_mail", name: "sendEmail", arguments: '{"to":"ada@example.org"}' }] },
        { text: "Sent." },
      ]),
    );
    const run: RealModelRun = { db: "real-approval", baseURL: server.baseURL, executionId: "a" };
    const page = await openHarnessPage(harness(), harness().context, noise);
    expect(await start(page, run)).toEqual({ ok: true, value: null });
    await page.waitForFunction(() => window.loom.realModel.state("a") === "awaitingApproval", undefined, {
      timeout: 15_000,
    });

    await reload(page);
    expect(await resume(page, run)).toEqual({ ok: true, value: null });
    expect(await page.evaluate(() => window.loom.realModel.state("a"))).toBe("awaitingApproval");
    expect(await page.evaluate((r) => window.loom.realModel.renderApprovals(r), run)).toEqual({
      ok: true,
      value: ["call_mail"],
    });
    await page.click('button[data-approve="call_mail"]');
    expect(await result(page, run)).toMatchObject({ ok: true, value: { text: "Sent.", turns: 2 } });
    expect(await page.evaluate(() => window.loom.realModel.toolRuns())).toEqual(["sendEmail"]);
    expect(server.requests.map((r) => r.turn)).toEqual([0, 1]);
    expect(noise.filter((n) => n.startsWith("pageerror"))).toEqual([]);
    await page.close();
  });
});
