// A golden comparison (issue 35): for the same scripted model output (ai 7's MockLanguageModelV4), the final
// UIMessage ai 7's readUIMessageStream builds from loomwork's toUIMessageStream equals the one it builds from
// streamText's own toUIMessageStream: text, reasoning, tool parts and their states, approvals (asked, then
// answered as useChat answers them and continued), denials, unknown tools, errors, retries and taint. Every
// chunk of both streams passes ai 7's chunk schema.
//
// What differs by design, and is normalised here, each checked on its own below: ids the two sides choose
// (the message's, an approval's, a reasoning part's); a thrown tool error's text, which is what each side's
// model read (streamText's "Error: <message>", loomwork's "<message>"); an unknown tool's part (streamText makes it a
// `dynamic-tool` with its own error text; loomwork keeps the `tool-<name>` part the call opened, with the
// error the model read); a tainted result's origin (in `resultProviderMetadata.loomwork`, which streamText
// has no notion of); a retried attempt's partial text, which loomwork voids with `reset-step` and ai 7.0's
// streamText keeps (its stream retry sends no reset-step): the golden for a retry is streamText's message
// without the failed attempt. Not compared: a step with several text blocks, or reasoning after text, which
// loomwork joins into one text and one reasoning part (its journaled reply holds one of each; docs/agents.md).
// loomwork's message is also read as a reloaded page reads it, by another app over the same stores (rebuilt
// from the journal), and must be the same.
import {
  convertToModelMessages,
  jsonSchema,
  stepCountIs,
  streamText,
  tool,
  type ToolSet,
  type UIMessage,
  type UIMessageChunk,
} from "ai-v7";
import { afterEach, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { convertToToolApprovalEvents } from "../../actors/agents/uiApprovals.js";
import { createApp, type App } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { tainted } from "../../machines/helpers/taint.js";
import { memoryStores } from "../../stores/memory.js";
import type { Stores } from "../../stores/types.js";
import { invalidChunks, mockModel, readMessage, respond, type Turn } from "./support.js";

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

const USER: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "Tell me about owls." }] };

// The tools, the same on both sides: what they return, whether they need a human.
const search = async ({ q }: { q: string }) => ({ hits: [`${q} hunt by sound`] });
const failing = async (_input: { q: string }): Promise<{ hits: string[] }> => {
  throw new Error("the archive is offline");
};
const rm = async ({ path }: { path: string }) => ({ removed: path });
const needsApproval = ({ path }: { path: string }) => !path.startsWith("/tmp/");

function aiTools(): ToolSet {
  const object = jsonSchema<{ q: string; path: string }>({ type: "object" });
  return {
    search: tool({ inputSchema: object, execute: search }),
    archive: tool({ inputSchema: object, execute: failing }),
    rm: tool({ inputSchema: object, needsApproval: (input) => needsApproval(input), execute: rm }),
  };
}

function loomwork(turns: Turn[], options: { taint?: boolean; stores?: Stores } = {}) {
  const stores = options.stores ?? memoryStores();
  const app = createApp(
    defineConfig({
      stores,
      effects: {
        model: createLlmEffect(fromAiSdk(mockModel(turns)), { retry: { backoffMs: 1, maxBackoffMs: 1 } }),
        search: createToolEffect(async (input: { q: string }) =>
          options.taint ? tainted(await search(input), "mcp:owls") : search(input),
        ),
        archive: createToolEffect(failing),
        rm: createToolEffect(rm, { needsApproval }),
      },
    }),
  );
  apps.push(app);
  return { app, stores, loop: agentLoop$({ id: "golden", model: "model", tools: ["search", "archive", "rm"] }) };
}

interface Side {
  message: UIMessage;
  chunks: UIMessageChunk[];
  errors: unknown[];
  /** loomwork's: the message a reloaded page reads, rebuilt from the journal by another app over the same stores. */
  rebuilt?: UIMessage;
}

/** streamText's message for one request per element of `requests` (each continues the last, as useChat does). */
async function aiSdk(turns: Turn[], answer?: (message: UIMessage) => UIMessage): Promise<Side> {
  const model = mockModel(turns);
  const tools = aiTools();
  const first = streamText({
    model,
    tools,
    messages: await convertToModelMessages([USER]),
    stopWhen: stepCountIs(20),
    onError: () => {},
  });
  const asked = await readMessage(first.toUIMessageStream());
  if (!answer) return asked;
  const answered = answer(asked.message);
  const messages = [USER, answered];
  const second = streamText({
    model,
    tools,
    messages: await convertToModelMessages(messages, { tools }),
    stopWhen: stepCountIs(20),
    onError: () => {}, // the error reaches the stream as its error chunk; streamText would log it too
  });
  const continued = await readMessage(second.toUIMessageStream({ originalMessages: messages }), answered);
  return {
    ...continued,
    chunks: [...asked.chunks, ...continued.chunks],
    errors: [...asked.errors, ...continued.errors],
  };
}

/** loomwork's message: the execution's response, and the continuation after the answers when `answer` is given. */
async function loom(turns: Turn[], answer?: (message: UIMessage) => UIMessage, taint = false): Promise<Side> {
  const { app, loop, stores } = loomwork(turns, { taint });
  await app.start(loop, { executionId: "g", input: { prompt: "Tell me about owls." } });
  const asked = await readMessage(app.stream("g").toUIMessageStream());
  const reload = async () =>
    (await readMessage(loomwork([], { taint, stores }).app.stream("g").toUIMessageStream())).message;
  if (!answer) return { ...asked, rebuilt: await reload() };
  const answered = answer(asked.message);
  const messages = [USER, answered];
  const actor = await app.resume("g");
  for (const event of convertToToolApprovalEvents(messages)) await actor.sendAsync(event);
  const continued = await readMessage(app.stream("g").toUIMessageStream({ originalMessages: messages }), answered);
  await app.result("g");
  return {
    ...continued,
    chunks: [...asked.chunks, ...continued.chunks],
    errors: [...asked.errors, ...continued.errors],
    rebuilt: await reload(),
  };
}

// The ids each side chooses, and the differences by design listed at the top; each is asserted where it matters.
function normalised(message: UIMessage): unknown {
  return {
    role: message.role,
    parts: message.parts.map((part) => {
      const copy: Record<string, unknown> = { ...part };
      if (part.type === "reasoning") delete copy.id;
      if (part.type === "dynamic-tool") {
        copy.type = `tool-${part.toolName}`;
        delete copy.toolName;
      }
      const errorText = copy.errorText;
      if (typeof errorText === "string") {
        // A tool error's text is what each side's model read: streamText's `getErrorMessage` gives "Error: <message>".
        copy.errorText = /unavailable tool|unknown tool/.test(errorText)
          ? "<unknown tool>"
          : errorText.replace(/^Error: /, "");
      }
      if ("approval" in part && part.approval) copy.approval = { ...part.approval, id: "<approval>" };
      delete copy.resultProviderMetadata;
      return copy;
    }),
  };
}

async function expectSameMessage(loomSide: Side, aiSide: Side): Promise<void> {
  expect(normalised(loomSide.message)).toEqual(normalised(aiSide.message));
  expect(normalised(loomSide.rebuilt!)).toEqual(normalised(loomSide.message));
  expect(await invalidChunks(loomSide.chunks)).toEqual([]);
  expect(await invalidChunks(aiSide.chunks)).toEqual([]);
}

const twoTurns: Turn[] = [
  {
    reasoning: "The user wants owls; search first.",
    text: "Let me search.",
    toolCalls: [{ id: "c_search", name: "search", input: { q: "barn owls" } }],
  },
  { reasoning: "The search says sound.", text: "Barn owls hunt by sound, with asymmetric ears." },
];

describe("loomwork's UI message equals streamText's for the same model output", () => {
  it("text, reasoning, a tool call and its output over two steps", async () => {
    const ours = await loom(twoTurns);
    const theirs = await aiSdk(twoTurns);
    await expectSameMessage(ours, theirs);
    expect(ours.message.parts.map((p) => p.type)).toEqual([
      "step-start",
      "reasoning",
      "text",
      "tool-search",
      "step-start",
      "reasoning",
      "text",
    ]);
  });

  it("a call whose input streams (tool-input-start, -delta) before the call", async () => {
    const turns: Turn[] = [
      { text: "Searching.", toolCalls: [{ id: "c_s", name: "search", input: { q: "barn owls" } }], streamInput: true },
      { text: "They hunt by sound." },
    ];
    const ours = await loom(turns);
    await expectSameMessage(ours, await aiSdk(turns));
    expect(ours.chunks.map((c) => c.type)).toEqual(expect.arrayContaining(["tool-input-start", "tool-input-delta"]));
  });

  it("a tool that throws: output-error with the error the model read", async () => {
    const turns: Turn[] = [
      { toolCalls: [{ id: "c_arch", name: "archive", input: { q: "owls" } }] },
      { text: "The archive is offline." },
    ];
    const ours = await loom(turns);
    await expectSameMessage(ours, await aiSdk(turns));
    expect(ours.message.parts[1]).toMatchObject({ state: "output-error", errorText: "the archive is offline" });
  });

  it("a call to an unknown tool: output-error (streamText: a dynamic-tool part with its own text)", async () => {
    const turns: Turn[] = [
      {
        toolCalls: [
          { id: "c_nope", name: "teleport", input: {} },
          { id: "c_s", name: "search", input: { q: "owls" } },
        ],
      },
      { text: "No teleport." },
    ];
    const ours = await loom(turns);
    const theirs = await aiSdk(turns);
    await expectSameMessage(ours, theirs);
    expect(ours.message.parts[1]).toEqual({
      type: "tool-teleport",
      toolCallId: "c_nope",
      state: "output-error",
      input: {},
      errorText: 'unknown tool "teleport"',
    });
    expect(theirs.message.parts[1]).toMatchObject({
      type: "dynamic-tool",
      toolName: "teleport",
      state: "output-error",
    });
  });

  it("approvals: asked, then answered as useChat answers (one approved, one denied), continued in the same message", async () => {
    const turns: Turn[] = [
      {
        text: "Removing.",
        toolCalls: [
          { id: "c_tmp", name: "rm", input: { path: "/tmp/x" } },
          { id: "c_a", name: "rm", input: { path: "/var/a" } },
          { id: "c_b", name: "rm", input: { path: "/var/b" } },
        ],
      },
      { text: "Removed /var/a; kept /var/b." },
    ];
    const answer = (message: UIMessage) => {
      const ids = message.parts.flatMap((p) => ("approval" in p && p.approval ? [p.approval.id] : []));
      return respond(respond(message, ids[0]!, true), ids[1]!, false, "keep it");
    };
    // After the first response, both sides end parked with the same parts.
    await expectSameMessage(await loom(turns.slice(0, 1)), await aiSdk(turns.slice(0, 1)));
    const ours = await loom(turns, answer);
    const theirs = await aiSdk(turns, answer);
    await expectSameMessage(ours, theirs);
    expect(ours.message.parts.filter((p) => p.type === "tool-rm").map((p) => ("state" in p ? p.state : ""))).toEqual([
      "output-available",
      "output-available",
      "output-denied",
    ]);
  });

  it("an error ends the message: the error chunk, masked as streamText masks it", async () => {
    const turns: Turn[] = [twoTurns[0]!]; // the second model call has no script: the provider throws
    const ours = await loom(turns);
    const theirs = await aiSdk(turns);
    await expectSameMessage(ours, theirs);
    const errorOf = (side: Side) => side.chunks.filter((c) => c.type === "error");
    expect(errorOf(ours)).toEqual([{ type: "error", errorText: "An error occurred." }]);
    expect(errorOf(theirs)).toEqual(errorOf(ours));
  });

  it("a retried attempt: loomwork's message is streamText's without the failed attempt", async () => {
    const ours = await loom([{ failAfterText: "Partial answer that will be void" }, ...twoTurns]);
    await expectSameMessage(ours, await aiSdk(twoTurns));
    expect(ours.chunks.map((c) => c.type)).toContain("reset-step");
  });

  it("a tainted result: the value, as streamText shows the untainted one, its origin in resultProviderMetadata", async () => {
    const ours = await loom(twoTurns, undefined, true);
    await expectSameMessage(ours, await aiSdk(twoTurns));
    expect(ours.message.parts[3]).toMatchObject({
      type: "tool-search",
      output: { hits: ["barn owls hunt by sound"] },
      resultProviderMetadata: { loomwork: { taintedFrom: ["mcp:owls"] } },
    });
  });
});
