// app.stream(id).toUIMessageStream() against ai 7's own parser and chunk schema (issue 35, "The UI message
// stream, to the AI SDK 7 protocol"): a retried attempt's partial text is voided with `reset-step`; a denied
// call ends `output-denied` and a call to an unknown tool `output-error`; a tainted result reaches the UI as
// its value with its origin in the part's result provider metadata; a call that needs approval asks with
// `tool-approval-request`, the stream ends at the park as streamText's does, the answers useChat sends
// back become TOOL_APPROVAL events (checked), and the response to them continues the same message.
import type { UIMessage } from "ai-v7";
import { afterEach, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { ApprovalMalformedError } from "../../actors/agents/approvals.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { convertToToolApprovalEvents } from "../../actors/agents/uiApprovals.js";
import { createApp, type App } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { tainted } from "../../machines/helpers/taint.js";
import { memoryStores } from "../../stores/memory.js";
import { invalidChunks, mockModel, readMessage, respond, type Turn } from "./support.js";

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

const USER: UIMessage = {
  id: "u1",
  role: "user",
  parts: [{ type: "text", text: "Clean up, then tell me about owls." }],
};

function agent(turns: Turn[]) {
  const ran: string[] = [];
  const app = createApp(
    defineConfig({
      stores: memoryStores(),
      effects: {
        model: createLlmEffect(fromAiSdk(mockModel(turns)), { retry: { backoffMs: 1, maxBackoffMs: 1 } }),
        search: createToolEffect(async ({ q }: { q: string }) => tainted({ hits: [`${q} hunt by sound`] }, "mcp:owls")),
        rm: createToolEffect(async ({ path }: { path: string }) => (ran.push(path), { removed: path }), {
          needsApproval: ({ path }) => !path.startsWith("/tmp/"),
        }),
      },
    }),
  );
  apps.push(app);
  return { app, ran, loop: agentLoop$({ id: "ops", model: "model", tools: ["search", "rm"] }) };
}

const partsOfType = (message: UIMessage, type: string) => message.parts.filter((p) => p.type === type);

describe("toUIMessageStream, read by ai 7's readUIMessageStream", () => {
  it("voids a retried attempt's partial text with reset-step: the final message has the answer only", async () => {
    const { app, loop } = agent([
      { failAfterText: "Partial answer that will be void" },
      { text: "Barn owls hunt by sound." },
    ]);
    const actor = await app.start(loop, { executionId: "r2", input: { prompt: "owls?" } });
    const read = readMessage(app.stream("r2").toUIMessageStream());
    await app.result("r2");
    const { message, chunks } = await read;
    expect(actor.getSnapshot().status).toBe("done");
    expect(chunks.map((c) => c.type)).toContain("reset-step");
    expect(chunks.findIndex((c) => c.type === "reset-step")).toBeGreaterThan(
      chunks.findIndex((c) => c.type === "text-delta" && c.delta.includes("Partial")),
    );
    expect(JSON.stringify(message)).not.toContain("Partial");
    expect(partsOfType(message, "text")).toEqual([{ type: "text", text: "Barn owls hunt by sound.", state: "done" }]);
    expect(partsOfType(message, "step-start")).toHaveLength(1);
    expect(await invalidChunks(chunks)).toEqual([]);
  });

  it("ends a denied call output-denied and a call to an unknown tool output-error; a tainted result shows its value, its origin in resultProviderMetadata", async () => {
    const { app, loop, ran } = agent([
      {
        text: "Let me look.",
        toolCalls: [
          { id: "c_search", name: "search", input: { q: "owls" } },
          { id: "c_nope", name: "nope", input: {} },
          { id: "c_rm", name: "rm", input: { path: "/etc/hosts" } },
        ],
      },
      { text: "Done." },
    ]);
    const actor = await app.start(loop, { executionId: "d1", input: { prompt: "x" } });
    const first = await readMessage(app.stream("d1").toUIMessageStream()); // ends at the park
    expect(actor.getSnapshot().value).toBe("awaitingApproval");
    expect(first.chunks.at(-1)).toEqual({ type: "finish", finishReason: "tool-calls" });
    await actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "c_rm", approved: false, reason: "hosts is needed" });
    await app.result("d1");
    const { message, chunks } = await readMessage(app.stream("d1").toUIMessageStream());
    expect(ran).toEqual([]);
    const tools = message.parts.filter((p) => p.type.startsWith("tool-"));
    expect(tools).toEqual([
      {
        type: "tool-search",
        toolCallId: "c_search",
        state: "output-available",
        input: { q: "owls" },
        output: { hits: ["owls hunt by sound"] },
        resultProviderMetadata: { loomwork: { taintedFrom: ["mcp:owls"] } },
      },
      { type: "tool-nope", toolCallId: "c_nope", state: "output-error", input: {}, errorText: 'unknown tool "nope"' },
      {
        type: "tool-rm",
        toolCallId: "c_rm",
        state: "output-denied",
        input: { path: "/etc/hosts" },
        approval: { id: "c_rm", approved: false, reason: "hosts is needed" },
      },
    ]);
    expect(chunks).toContainEqual({ type: "tool-output-denied", toolCallId: "c_rm" });
    expect(await invalidChunks([...first.chunks, ...chunks])).toEqual([]);
  });
  it("ends a call the run never answered output-error when it ends: the last allowed turn's calls, a stopped run's", async () => {
    const { app } = agent([
      {
        toolCalls: [
          { id: "c_rm", name: "rm", input: { path: "/etc/hosts" } },
          { id: "c_search", name: "search", input: { q: "owls" } },
        ],
      },
    ]);
    const last = agentLoop$({ id: "ops", model: "model", tools: ["search", "rm"], maxTurns: 1 });
    await app.start(last, { executionId: "m1", input: { prompt: "x" } });
    await app.result("m1");
    const { message, chunks } = await readMessage(app.stream("m1").toUIMessageStream());
    expect(message.parts.filter((p) => p.type.startsWith("tool-")).map((p) => ("state" in p ? p.state : ""))).toEqual([
      "output-error",
      "output-error",
    ]);
    expect(message.parts[1]).toMatchObject({
      errorText: "no result: the execution ended (done) before this call had one",
    });
    expect(chunks.at(-1)).toEqual({ type: "finish" });
    expect(await invalidChunks(chunks)).toEqual([]);

    // Stopped while a tool ran: its part ends output-error too, after the abort.
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const stopped = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          model: createLlmEffect(fromAiSdk(mockModel([{ toolCalls: [{ id: "c_slow", name: "slow", input: {} }] }]))),
          slow: createToolEffect(
            (_input: unknown, ctx) =>
              new Promise((_, reject) => {
                started();
                ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
              }),
          ),
        },
      }),
    );
    apps.push(stopped);
    await stopped.start(agentLoop$({ id: "s", model: "model", tools: ["slow"] }), {
      executionId: "s1",
      input: { prompt: "x" },
    });
    await running;
    const read = readMessage(stopped.stream("s1").toUIMessageStream());
    await stopped.stop("s1", "the user pressed stop");
    const after = await read;
    expect(after.message.parts.find((p) => p.type === "tool-slow")).toMatchObject({
      state: "output-error",
      errorText: "no result: the execution ended (stopped) before this call had one",
    });
    expect(after.chunks.filter((c) => c.type === "abort")).toEqual([
      { type: "abort", reason: "the user pressed stop" },
    ]);
    expect(await invalidChunks(after.chunks)).toEqual([]);
  });
});

describe("approvals through the protocol's parts", () => {
  const TURNS: Turn[] = [
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

  it("asks with tool-approval-request, ends the response at the park, and continues the same message after useChat's answers", async () => {
    const { app, loop, ran } = agent(TURNS);
    await app.start(loop, { executionId: "a1", input: { prompt: "Clean up." } });
    const asked = await readMessage(app.stream("a1").toUIMessageStream());
    expect(asked.chunks.filter((c) => c.type === "tool-approval-request")).toEqual([
      { type: "tool-approval-request", approvalId: "c_a", toolCallId: "c_a" },
      { type: "tool-approval-request", approvalId: "c_b", toolCallId: "c_b" },
    ]);
    expect(asked.message.parts.filter((p) => "state" in p && p.state === "approval-requested")).toHaveLength(2);
    expect(ran).toEqual(["/tmp/x"]);

    // What useChat's addToolApprovalResponse leaves in the message, and sends back with the next request.
    const answered = respond(respond(asked.message, "c_a", true), "c_b", false, "keep it");
    const messages = [USER, answered];
    const events = convertToToolApprovalEvents(messages);
    expect(events).toEqual([
      { type: "TOOL_APPROVAL", toolCallId: "c_a", approved: true },
      { type: "TOOL_APPROVAL", toolCallId: "c_b", approved: false, reason: "keep it" },
    ]);
    const actor = await app.resume("a1");
    for (const event of events) await actor.sendAsync(event);
    const continued = await readMessage(app.stream("a1").toUIMessageStream({ originalMessages: messages }), answered);
    await app.result("a1");
    expect(ran).toEqual(["/tmp/x", "/var/a"]);
    expect(continued.chunks[0]).toEqual({ type: "start", messageId: answered.id });
    const { message } = continued;
    expect(message.parts.map((p) => p.type)).toEqual([
      "step-start",
      "text",
      "tool-rm",
      "tool-rm",
      "tool-rm",
      "step-start",
      "text",
    ]);
    expect(message.parts[3]).toMatchObject({ state: "output-available", approval: { id: "c_a", approved: true } });
    expect(message.parts[4]).toMatchObject({
      state: "output-denied",
      approval: { approved: false, reason: "keep it" },
    });
    // A reload rebuilds the same message from the journal, in one response.
    const rebuilt = await readMessage(app.stream("a1").toUIMessageStream());
    expect(rebuilt.message).toEqual({ ...message, id: rebuilt.message.id });
    expect(await invalidChunks([...asked.chunks, ...continued.chunks, ...rebuilt.chunks])).toEqual([]);
  });

  it("ends a continuation whose message answers no park of the run, rather than wait for the run's end", async () => {
    const { app, loop } = agent(TURNS);
    await app.start(loop, { executionId: "a3", input: { prompt: "Clean up." } });
    const asked = await readMessage(app.stream("a3").toUIMessageStream());
    const forged: UIMessage = {
      ...asked.message,
      parts: [
        ...asked.message.parts,
        {
          type: "tool-rm",
          toolCallId: "c_never",
          state: "approval-responded",
          input: {},
          approval: { id: "c_never", approved: true },
        },
      ],
    };
    const continued = await readMessage(
      app.stream("a3").toUIMessageStream({ originalMessages: [USER, forged] }),
      forged,
    );
    expect(continued.chunks).toEqual([
      { type: "start", messageId: forged.id },
      { type: "finish", finishReason: "tool-calls" },
    ]);
  });

  it("refuses a malformed answer with the runtime's own check, takes none from a message that is not the last assistant message, and refuses bad stream options", () => {
    const asked: UIMessage = {
      id: "m1",
      role: "assistant",
      parts: [
        {
          type: "tool-rm",
          toolCallId: "c_a",
          state: "approval-responded",
          input: {},
          approval: { id: "c_a", approved: "yes" as unknown as boolean },
        },
      ],
    };
    expect(() => convertToToolApprovalEvents([USER, asked])).toThrow(ApprovalMalformedError);
    expect(() => convertToToolApprovalEvents("nope" as unknown as UIMessage[])).toThrow(/messages/);
    expect(convertToToolApprovalEvents([asked, USER])).toEqual([]);
    expect(convertToToolApprovalEvents([])).toEqual([]);
    // The stream's options come from a request's body too: refused at the call, naming the option.
    const { app } = agent([]);
    expect(() => app.stream("a2").toUIMessageStream({ originalMessages: "all" } as never)).toThrow(
      /toUIMessageStream\.originalMessages/,
    );
    expect(() => app.stream("a2").toUIMessageStream({ onError: "quiet" } as never)).toThrow(
      /toUIMessageStream\.onError/,
    );
  });
});
