// Issue 34: toUIMessageStream of a lead renders each sub-agent's work as the AI SDK renders an agent called as a
// tool (docs "Subagents": preliminary tool results): the call's output is the sub-agent's UI message, sent as
// `tool-output-available` with `preliminary: true` while it works, and once more, final, when the lead has its answer.
// Read with ai 7's own readUIMessageStream and chunk schema.
import { readUIMessageStream as readV5 } from "ai";
import { readUIMessageStream as readV6 } from "ai-v6";
import type { UIMessage } from "ai-v7";
import { describe, expect, it } from "vitest";
import { createApp, defineConfig, memoryStores } from "../../index.js";
import { lead, treeEffects, until } from "../agents/tree/support.js";
import { invalidChunks, readMessage } from "./support.js";

type ToolPart = { type: string; toolCallId: string; state: string; preliminary?: boolean; output?: UIMessage };

describe("toUIMessageStream of a tree of agents", () => {
  it("renders each sub-agent's work as its call's preliminary output, then the final one", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let waiting = 0;
    const { effects } = treeEffects({
      streaming: true,
      beforeAnswer: async () => {
        waiting++;
        await gate;
      },
    });
    const app = createApp(defineConfig({ stores: memoryStores(), effects }));
    await app.start(lead, { executionId: "u1", input: { prompt: "owls and bats?" } });
    const reading = readMessage(app.stream("u1").toUIMessageStream());
    await until(() => waiting === 2, "both sub-agents mid-answer");
    release();
    const { message, chunks, errors } = await reading;
    expect(errors).toEqual([]);
    expect(await invalidChunks(chunks)).toEqual([]);
    const calls = message.parts.filter((p) => p.type === "tool-researcher") as unknown as ToolPart[];
    expect(calls).toHaveLength(2);
    for (const [j, question] of ["owls", "bats"].entries()) {
      const call = calls[j]!;
      expect(call.state).toBe("output-available");
      expect(call.preliminary).not.toBe(true);
      const nested = call.output!;
      expect(nested.role).toBe("assistant");
      expect(nested.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toEqual([
        `${question} found`,
      ]);
      expect(nested.parts.find((p) => p.type === "tool-search")).toMatchObject({
        state: "output-available",
        input: { q: question },
        output: `${question}: by night`,
      });
      // While it worked: preliminary outputs of the call, the first before its answer's text was whole.
      const preliminary = chunks.filter(
        (c) => c.type === "tool-output-available" && c.toolCallId === call.toolCallId && c.preliminary === true,
      );
      expect(preliminary.length).toBeGreaterThan(2);
    }
    const text = message.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text);
    expect(text.join("")).toContain("summary:");
    await app.close();
  });

  it("is read the same by ai 5's and ai 6's readUIMessageStream: each call's output is the sub-agent's message", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: treeEffects().effects }));
    await app.start(lead, { executionId: "u2", input: { prompt: "owls and bats?" } });
    await app.result("u2");
    type Read = (options: { stream: never }) => AsyncIterable<{ parts: unknown[] }>;
    for (const read of [readV5 as unknown as Read, readV6 as unknown as Read]) {
      let last: { parts: unknown[] } | undefined;
      for await (const message of read({ stream: app.stream("u2").toUIMessageStream() as never })) last = message;
      const calls = last!.parts.filter((p) => (p as ToolPart).type === "tool-researcher") as ToolPart[];
      expect(calls.map((c) => [c.state, c.preliminary === true, c.output?.parts.at(-1)])).toEqual([
        ["output-available", false, { type: "text", text: "owls found", state: "done" }],
        ["output-available", false, { type: "text", text: "bats found", state: "done" }],
      ]);
    }
    await app.close();
  });

  it("shows a sub-agent's parked call in its message, and goes on once the lead is sent the decision", async () => {
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: treeEffects({ approveSearch: true, callIds: true, questions: ["owls"] }).effects,
      }),
    );
    const actor = await app.start(lead, { executionId: "u3", input: { prompt: "owls?" } });
    const seen: unknown[] = [];
    const reading = readMessage(
      app
        .stream("u3")
        .toUIMessageStream()
        .pipeThrough(
          new TransformStream({
            transform(chunk, out) {
              seen.push(chunk);
              out.enqueue(chunk);
            },
          }),
        ),
    );
    const asked = () =>
      seen.some(
        (c) =>
          (c as { preliminary?: boolean }).preliminary === true &&
          JSON.stringify(c).includes('"state":"approval-requested"'),
      );
    await until(asked, "the sub-agent's parked call in the stream");
    const parked = seen.findLast((c) => (c as { preliminary?: boolean }).preliminary === true) as { output: UIMessage };
    expect(parked.output.parts.find((p) => p.type === "tool-search")).toMatchObject({
      toolCallId: "call-owls",
      state: "approval-requested",
      approval: { id: "call-owls" },
    });
    await actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call-owls", approved: true });
    const { message, errors } = await reading;
    expect(errors).toEqual([]);
    const call = message.parts.find((p) => p.type === "tool-researcher") as unknown as ToolPart;
    expect(call.output!.parts.find((p) => p.type === "tool-search")).toMatchObject({
      state: "output-available",
      output: "owls: by night",
    });
    await app.close();
  });
});
