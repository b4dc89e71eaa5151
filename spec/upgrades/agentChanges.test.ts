// Which agentLoop$ changes are safe without a version or a patch: each row of docs/upgrades.md's agent
// table is decided here, by replaying journals written by the old agent against the changed one
// (checkReplay(app, logic)) and by resuming a run that was in flight when the app moved.
//
// The journals: `answers-<n>` asks the model, which calls `search` n times and then answers;
// `limit` runs into maxTurns (the model never stops calling tools); `inflight` is parked mid-run (its
// second model call never returns before the app closes).
import { describe, expect, it } from "vitest";
import { agentLoop$, type AgentLoopConfig } from "../../actors/agents/agentLoop.js";
import type { Model, ModelRequest } from "../../actors/agents/model.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createSummarizerEffect } from "../../actors/agents/summarizer.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { patchedValue } from "../../machines/helpers/patches.js";
import { memoryStores } from "../../stores/memory.js";
import { PATCH_MARKED } from "../../stores/schema.js";
import type { Stores } from "../../stores/types.js";
import { checkReplay } from "../../upgrades.js";

const BASE: AgentLoopConfig = { id: "agent", model: "model", tools: ["search"], maxTurns: 3 };

// The prompt says how many tools to call before answering ("tools:2"), or to never stop ("tools:99"),
// and at which call to hang ("hang:1"). Every request the model saw is kept.
function agentEffects(options: { hang?: boolean } = {}) {
  const requests: ModelRequest[] = [];
  let hanging = () => undefined as void;
  const hung = new Promise<void>((resolve) => (hanging = resolve));
  const model: Model = {
    id: "planned",
    generate: async (request, ctx) => {
      requests.push(request);
      const prompt = String(request.messages.find((m) => m.role === "user")?.content ?? "");
      const calls = Number(/tools:(\d+)/.exec(prompt)?.[1] ?? 0);
      const made = request.messages.filter((m) => m.role === "assistant").length;
      const hangAt = /hang:(\d+)/.exec(prompt)?.[1];
      if (options.hang && hangAt !== undefined && made === Number(hangAt)) {
        hanging();
        await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("aborted"))));
      }
      return made < calls
        ? { toolCalls: [{ toolName: "search", input: { q: `q${made}` } }] }
        : { text: `answer after ${made} calls` };
    },
  };
  const summarizer: Model = { id: "summarizer", generate: async () => ({ text: "summary" }) };
  return {
    requests,
    hung,
    effects: {
      model: createLlmEffect(model),
      search: createToolEffect(async ({ q }: { q: string }) => ({ hits: [`${q}: ${"long text ".repeat(40)}`] })),
      lookup: createToolEffect(async () => ({ found: true })),
      summarize: createSummarizerEffect(summarizer),
    },
  };
}

// Journals written by the base agent: two finished, one that hit maxTurns, one in flight.
async function oldJournals(snapshotEvery: number | false): Promise<Stores> {
  const stores = memoryStores();
  const { effects, hung } = agentEffects({ hang: true });
  const agent = agentLoop$(BASE);
  const app = createApp(defineConfig({ stores, effects, execution: { snapshotEvery } }));
  for (const [id, prompt] of [
    ["answers-0", "tools:0"],
    ["answers-1", "tools:1"],
    ["limit", "tools:99"],
  ] as const) {
    await app.start(agent, { executionId: id, input: { prompt } });
    await app.result(id);
  }
  const inflight = await app.start(agent, { executionId: "inflight", input: { prompt: "tools:2 hang:1" } });
  await hung;
  expect(inflight.getSnapshot().value).toBe("thinking");
  await app.close();
  return stores;
}

// Replays the old journals against `changed`, then resumes the one in flight on it and lets it finish.
async function judge(changed: AgentLoopConfig, options: { snapshotEvery?: number | false } = {}) {
  const stores = await oldJournals(options.snapshotEvery ?? false);
  const { effects, requests } = agentEffects();
  const agent = agentLoop$(changed);
  const app = createApp(defineConfig({ stores, effects, logics: [agent] }));
  const report = await checkReplay(app, agent);
  const verdicts = Object.fromEntries(
    report.results.filter((r) => r.status !== "compatible").map((r) => [r.executionId, r.status]),
  );
  const compatible = ["answers-0", "answers-1", "limit", "inflight"].filter((id) => !(id in verdicts));
  let inflight: unknown;
  if (!("inflight" in verdicts)) inflight = await app.resume("inflight").then(() => app.result("inflight"));
  await app.close();
  return { stores, report, verdicts, compatible, inflight, requests };
}

describe("agentLoop$ changes without a version or a patch", () => {
  it("a new system prompt: safe; a run in flight rebuilt from its start sees the new prompt on its later turns", async () => {
    const { report, inflight, requests } = await judge({ ...BASE, system: "Be brief." });
    expect(report.ok).toBe(true);
    expect(inflight).toMatchObject({ text: "answer after 2 calls" });
    // The resumed run's next model call: its transcript was rebuilt by the new definition.
    expect(requests[0]!.messages[0]).toEqual({ role: "system", content: "Be brief." });
    // Resumed from a snapshot instead, it keeps the transcript it had: no system message. Which one a run
    // in flight sees depends on its snapshot: pin it with patchedValue() (below) when it matters.
    const fromSnapshot = await judge({ ...BASE, system: "Be brief." }, { snapshotEvery: 1 });
    expect(fromSnapshot.requests[0]!.messages[0]).toMatchObject({ role: "user" });
  });

  it("a tool added: safe; the run in flight offers it to the model from its next turn", async () => {
    const { report, inflight, requests } = await judge({ ...BASE, tools: ["search", "lookup"] });
    expect(report.ok).toBe(true);
    expect(inflight).toMatchObject({ text: "answer after 2 calls" });
    expect(requests[0]!.tools.map((t) => t.name)).toEqual(["search", "lookup"]);
  });

  it("compaction switched on mid-run: not safe; a journal whose transcript already passed afterBytes diverges", async () => {
    // Every search result is ~440 bytes: after one tool call the transcript is past 300 bytes.
    const { report, verdicts } = await judge({ ...BASE, compaction: { toolId: "summarize", afterBytes: 300 } });
    expect(report.ok).toBe(false);
    expect(verdicts["answers-1"]).toBe("diverges");
    expect(verdicts["answers-0"]).toBeUndefined(); // it never got past the threshold: compatible
    const diverged = report.results.find((r) => r.executionId === "answers-1");
    expect(diverged).toMatchObject({ produced: { type: "loom.transition", to: "compacting" } });
  });

  it("a changed maxTokens: safe; the run in flight asks with the new bound from its next turn", async () => {
    const { report, inflight, requests } = await judge({ ...BASE, maxTokens: 256 });
    expect(report.ok).toBe(true);
    expect(inflight).toMatchObject({ text: "answer after 2 calls" });
    expect(requests[0]!.maxTokens).toBe(256);
  });

  it("a renamed tool: not safe; a journal whose model called the old name diverges", async () => {
    const { report, verdicts } = await judge({ ...BASE, tools: ["lookup"] });
    expect(report.ok).toBe(false);
    expect(verdicts["answers-1"]).toBe("diverges");
    expect(verdicts["answers-0"]).toBeUndefined(); // no tool was called: compatible
  });

  it("a changed maxTurns: not safe; a journal that reached the old limit diverges (raised or lowered)", async () => {
    const raised = await judge({ ...BASE, maxTurns: 5 });
    expect(raised.verdicts).toEqual({ limit: "diverges" });
    expect(raised.report.results.find((r) => r.executionId === "limit")).toMatchObject({
      journal: { to: "done" },
      produced: { to: "acting" },
    });
    const lowered = await judge({ ...BASE, maxTurns: 2 });
    expect(lowered.verdicts).toMatchObject({ limit: "diverges" });
  });
});

describe("agentLoop$ changes with patchedValue(changeId, ifPatched, otherwise)", () => {
  it("maxTurns: old journals replay on the old limit, new runs get the new one and journal the marker", async () => {
    const changed = { ...BASE, maxTurns: patchedValue("more-turns", 5, 3) };
    const { stores, report, inflight } = await judge(changed);
    expect(report.ok).toBe(true);
    expect(inflight).toMatchObject({ text: "answer after 2 calls" });

    const { effects } = agentEffects();
    const app = createApp(defineConfig({ stores, effects }));
    await app.start(agentLoop$(changed), { executionId: "new-limit", input: { prompt: "tools:99" } });
    expect(await app.result("new-limit")).toMatchObject({ turns: 5 });
    expect((await app.log("new-limit")).filter((r) => r.type === PATCH_MARKED)).toEqual([
      expect.objectContaining({ changeId: "more-turns" }),
    ]);
    expect((await checkReplay(app, agentLoop$(changed))).ok).toBe(true);
    await app.close();
  });

  it("compaction switched on for new runs only: every old journal replays, new runs compact", async () => {
    const changed = {
      ...BASE,
      compaction: patchedValue("compact", { toolId: "summarize", afterBytes: 300 }, undefined),
    };
    const { stores, report } = await judge(changed);
    expect(report.ok).toBe(true);

    const { effects } = agentEffects();
    const app = createApp(defineConfig({ stores, effects }));
    await app.start(agentLoop$(changed), { executionId: "compacting", input: { prompt: "tools:2" } });
    await app.result("compacting");
    expect(
      (await app.log("compacting")).some((r) => r.type === "loom.step.completed" && r.stepId.endsWith(":compact")),
    ).toBe(true);
    await app.close();
  });

  it("a system prompt chosen per run: the run in flight keeps the old prompt, a new one gets the new", async () => {
    const changed = { ...BASE, system: patchedValue("brief", "Be brief.", "Be thorough.") };
    const { requests } = await judge(changed);
    expect(requests[0]!.messages[0]).toEqual({ role: "system", content: "Be thorough." });
  });
});
