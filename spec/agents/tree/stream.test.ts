// Issue 34: app.stream of a lead carries its sub-agents' parts, live deltas included, each tagged with the execution
// it comes from, its agent and the lead's call it answers; a sub-agent's call is paired with its result (never the
// "unknown tool" the stream made of it); a reader that reconnects with `from` continues exactly.
import { describe, expect, it } from "vitest";
import { createApp, defineConfig, memoryStores, type StreamPart } from "../../../index.js";
import { lead, treeEffects, until } from "./support.js";

describe("app.stream of a tree of agents", () => {
  it("carries the sub-agents' deltas, live, tagged with their execution, agent and the lead's call", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let waiting = 0;
    const { effects } = treeEffects({
      streaming: true,
      callIds: true,
      beforeAnswer: async () => {
        waiting++;
        await gate;
      },
    });
    const app = createApp(defineConfig({ stores: memoryStores(), effects }));
    await app.start(lead, { executionId: "s1", input: { prompt: "owls and bats?" } });
    const seen: StreamPart[] = [];
    const reading = (async () => {
      for await (const part of app.stream("s1")) seen.push(part);
    })();
    // Live: each sub-agent's first delta is in the lead's stream while its model call still runs.
    await until(() => waiting === 2, "both sub-agents mid-answer");
    await until(() => seen.filter((p) => p.type === "text-delta" && p.executionId).length === 2, "the live deltas");
    const calls = seen.filter((p) => p.type === "tool-call" && p.executionId === undefined);
    expect(calls.map((p) => p.toolName)).toEqual(["researcher", "researcher"]);
    expect(seen.find((p) => p.type === "text-delta" && p.executionId === "s1/tool:0:1")).toMatchObject({
      delta: "bats ",
      agent: "researcher",
      parentToolCallId: calls[1]!.id,
      stepId: "researcher#turn:1:model",
    });
    release();
    await app.result("s1");
    await reading;
    expect(seen.map((p) => p.index)).toEqual(seen.map((_, i) => i));
    // The sub-agent's own parts, in order: its search call and result, then its answer.
    const owls = seen
      .filter((p) => p.executionId === "s1/tool:0:0")
      .map((p) => `${p.type}:${p.delta ?? p.toolName ?? ""}`);
    expect(owls).toEqual([
      "start-step:",
      "tool-call:search",
      "finish-step:",
      "tool-result:",
      "start-step:",
      "text-delta:owls ",
      "text-delta:found",
      "finish-step:",
    ]);
    // The lead's calls are answered with the sub-agents' answers.
    const results = seen.filter((p) => p.type === "tool-result" && p.executionId === undefined);
    expect(results.map((p) => [p.id, p.output, p.isError])).toEqual([
      [calls[0]!.id, "owls found", undefined],
      [calls[1]!.id, "bats found", undefined],
    ]);
    // A reader that reconnects where it left off continues exactly.
    const again: StreamPart[] = [];
    for await (const part of app.stream("s1", { from: 5 })) again.push(part);
    expect(again).toEqual(seen.slice(5));
    await app.close();
  });

  it("rebuilds an ended tree's stream from the journals in a fresh app", async () => {
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: treeEffects({ callIds: true }).effects }));
    await app.start(lead, { executionId: "s2", input: { prompt: "owls and bats?" } });
    await app.result("s2");
    await app.close();
    const fresh = createApp(defineConfig({ stores, effects: treeEffects().effects }));
    const parts: StreamPart[] = [];
    for await (const part of fresh.stream("s2")) parts.push(part);
    expect(parts.filter((p) => p.executionId === "s2/tool:0:1" && p.type === "text-delta").map((p) => p.delta)).toEqual(
      ["bats found"],
    );
    expect(parts.some((p) => p.isError)).toBe(false);
    // Each sub-agent's parts come before the lead's result of its call.
    for (const [j, id] of ["s2/tool:0:0", "s2/tool:0:1"].entries()) {
      const call = parts.filter((p) => p.type === "tool-call" && p.executionId === undefined)[j]!;
      const result = parts.find((p) => p.type === "tool-result" && p.id === call.id)!;
      expect(parts.filter((p) => p.executionId === id).at(-1)!.index).toBeLessThan(result.index);
      expect(parts.find((p) => p.executionId === id)?.parentToolCallId).toBe(call.id);
    }
    await fresh.close();
  });
});
