// app.stream at its boundary: what a client (a route of a server, the control socket) may pass it. An id
// with no execution is refused on the first read and holds nothing; a bad `from` or `signal` is refused at
// the call; an execution that exists but does not run here streams its journal, then follows it if it is
// resumed here, and is let go once nobody reads it.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import type { StreamPart } from "../../actors/agents/streams.js";
import { appInternals, createApp, type App } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { ConfigError, UnknownExecutionError } from "../../actors/errors.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import type { ModelReply } from "../../machines/helpers/messages.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import type { Stores } from "../../stores/types.js";

const apps: App[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

const loop = agentLoop$({ id: "owl", model: "model", tools: ["search"] });
const SEARCH: ModelReply = { toolCalls: [{ toolName: "search", input: { q: "owls" } }] };

function agent(
  stores: Stores,
  script: (call: number) => ModelReply | Promise<ModelReply> = (call) =>
    call === 0 ? SEARCH : { text: "Owls hunt by ear." },
) {
  const app = createApp(
    defineConfig({
      stores,
      logics: [loop],
      effects: {
        model: createLlmEffect(scriptedModel((_request, call) => script(call))),
        search: createToolEffect(async ({ q }) => [`${q}: hit`], { inputSchema: z.object({ q: z.string() }) }),
      },
    }),
  );
  apps.push(app);
  return app;
}

/** `promise`'s outcome, or a failure naming `what` if it has not settled in `ms` (a stream that never ends). */
async function settled<T>(promise: Promise<T>, what: string, ms = 20_000): Promise<{ value?: T; error?: unknown }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function collect(iterable: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of iterable) out.push(part);
  return out;
}

/** Waits until `cond` holds, checking as the event loop turns (a generous bound, never a timing assertion). */
async function until(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`never: ${what}`);
}

describe("app.stream of an id with no execution", () => {
  it("rejects on the first read with UnknownExecutionError (iterator and UI message stream alike), holding nothing", async () => {
    const app = agent(memoryStores());
    const first = await settled(
      app.stream("made-up")[Symbol.asyncIterator]().next(),
      "the first read of an unknown id",
    );
    expect(first.error).toBeInstanceOf(UnknownExecutionError);
    expect(first.error).toMatchObject({ code: "LOOM_UNKNOWN_EXECUTION", executionId: "made-up" });
    const ui = await settled(
      app.stream("made-up-too").toUIMessageStream().getReader().read(),
      "the first UI read of an unknown id",
    );
    expect(ui.error).toBeInstanceOf(UnknownExecutionError);
    expect(appInternals(app).streams.held()).toEqual({ tapes: 0, kept: 0 });
  });

  it("10,000 calls with made-up ids, read or not, leave no buffer or tape behind", async () => {
    const app = agent(memoryStores());
    await app.start(loop, { executionId: "real", input: { prompt: "x" } });
    await app.result("real");
    const reads: Promise<{ value?: unknown; error?: unknown }>[] = [];
    for (let i = 0; i < 10_000; i++) {
      const stream = app.stream(`made-up-${i}`);
      if (i % 2 === 0) reads.push(settled(stream[Symbol.asyncIterator]().next(), `the first read of made-up-${i}`));
    }
    const outcomes = await Promise.all(reads);
    expect(outcomes.every((o) => o.error instanceof UnknownExecutionError)).toBe(true);
    expect(appInternals(app).streams.held()).toEqual({ tapes: 0, kept: 0 });
  });
});

describe("app.stream options refused at the call", () => {
  it("a from that is not a non-negative safe integer is a ConfigError naming stream.from", async () => {
    const app = agent(memoryStores());
    await app.start(loop, { executionId: "e", input: { prompt: "x" } });
    for (const from of [Number.NaN, 2.5, "abc", "3", -1, Number.POSITIVE_INFINITY, 2 ** 53, null]) {
      expect(() => app.stream("e", { from: from as number }), String(from)).toThrow(ConfigError);
      expect(() => app.stream("e", { from: from as number })).toThrow(/stream\.from/);
    }
    const parts = await collect(app.stream("e", { from: 0 }));
    expect(parts.length).toBeGreaterThan(0);
    expect(await collect(app.stream("e", { from: parts.length - 1 }))).toEqual(parts.slice(-1));
  });

  it("a signal that is not an AbortSignal is a ConfigError naming stream.signal, and leaves no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const app = agent(memoryStores());
      await app.start(loop, { executionId: "e", input: { prompt: "x" } });
      await app.result("e");
      for (const signal of [{}, "stop", { aborted: false }, true]) {
        expect(() => app.stream("e", { signal: signal as unknown as AbortSignal }), JSON.stringify(signal)).toThrow(
          /stream\.signal/,
        );
      }
      expect(() => app.stream(42 as unknown as string)).toThrow(/stream\.executionId/);
      // A real signal still ends the iteration when aborted.
      const abort = new AbortController();
      abort.abort();
      expect(await collect(app.stream("e", { signal: abort.signal }))).toEqual([]);
      // Unhandled rejections surface on a later turn of the event loop: give them several.
      for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 1));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});

describe("app.stream of an execution that exists but does not run in this app", () => {
  it("ended: the recorded parts, then the end; nothing is held once the reader is done", async () => {
    const stores = memoryStores();
    const writer = agent(stores);
    await writer.start(loop, { executionId: "e", input: { prompt: "x" } });
    await writer.result("e");
    const reader = agent(stores);
    const parts = await collect(reader.stream("e"));
    expect(parts.map((p) => p.type)).toEqual([
      "start-step",
      "tool-call",
      "finish-step",
      "tool-result",
      "start-step",
      "text-delta",
      "finish-step",
    ]);
    expect(appInternals(reader).streams.held()).toEqual({ tapes: 0, kept: 0 });
  });

  it("unfinished: the recorded parts; a resume here continues it live to its end; an aborted reader lets it go", async () => {
    const stores = memoryStores();
    const writer = agent(stores, (call) => (call === 0 ? SEARCH : new Promise<never>(() => undefined)));
    await writer.start(loop, { executionId: "u", input: { prompt: "x" } });
    await until(
      async () =>
        (await stores.events.read("u")).some((r) => r.type === STEP_COMPLETED && r.stepId === "owl#turn:0:tool:0"),
      "turn 0's tool result journaled",
    );
    await writer.close(); // the process goes away with turn 1 in flight

    const here = agent(stores);
    // Opened, read and given up before anything runs it here: nothing stays behind.
    const abort = new AbortController();
    const early = here.stream("u", { signal: abort.signal })[Symbol.asyncIterator]();
    expect((await early.next()).value).toMatchObject({ type: "start-step", stepId: "owl#turn:0:model" });
    abort.abort();
    await early.return!(undefined);
    expect(appInternals(here).streams.held()).toEqual({ tapes: 0, kept: 0 });

    const stream = here.stream("u")[Symbol.asyncIterator]();
    const seen: StreamPart[] = [];
    while (seen.at(-1)?.type !== "tool-result") seen.push((await stream.next()).value as StreamPart);
    expect(seen.map((p) => p.type)).toEqual(["start-step", "tool-call", "finish-step", "tool-result"]);
    await here.resume("u");
    for (let next = await stream.next(); !next.done; next = await stream.next()) seen.push(next.value);
    expect(seen.slice(4).map((p) => p.type)).toEqual(["start-step", "text-delta", "finish-step"]);
    expect(seen.map((p) => p.index)).toEqual(seen.map((_, i) => i));
    expect(await here.result("u")).toMatchObject({ text: "Owls hunt by ear." });
  });

  it("a streamed step whose reply has tool calls it never streamed gives them as tool-call parts before its end", async () => {
    let calls = 0;
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          // A model of one's own: it streams its text, and its calls come only in its reply.
          model: createLlmEffect({
            id: "texts-only",
            async generate(_request, ctx) {
              if (calls++ > 0) return { text: "Owls hunt by ear." };
              ctx.emitDelta?.({ type: "text-delta", delta: "Let me look." });
              return { text: "Let me look.", toolCalls: [{ id: "c1", toolName: "search", input: { q: "owls" } }] };
            },
          }),
          search: createToolEffect(async ({ q }) => [`${q}: hit`], { inputSchema: z.object({ q: z.string() }) }),
        },
      }),
    );
    apps.push(app);
    await app.start(loop, { executionId: "t", input: { prompt: "owls?" } });
    const seen: StreamPart[] = [];
    for await (const part of app.stream("t")) seen.push(part);
    expect(seen.slice(0, 5).map((p) => [p.type, p.id ?? p.delta])).toEqual([
      ["start-step", undefined],
      ["text-delta", "Let me look."],
      ["tool-call", "c1"],
      ["finish-step", undefined],
      ["tool-result", "c1"],
    ]);
    expect(seen[2]).toMatchObject({ toolName: "search", input: { q: "owls" } });
  });
});
