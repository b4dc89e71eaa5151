// Streams across processes (issue 37, ADR 0019): app.stream in a web server's app follows an execution a fleet worker
// runs, on the same PostgreSQL schema. The worker and each "web server" have stores of their own (their own pool and
// LISTEN connection): nothing is shared in memory. The model streams a few deltas, then waits for the test's gate, so
// what the web app reads before the gate opens can only have come live from the worker.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import type { StreamPart } from "../../actors/agents/deltas.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { createWorker, postgresStores, type PostgresStores, type Worker } from "../../adapters/postgres/index.js";
import { LiveChild } from "../reliability/support.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { finding, orchestrator, searchInput, treeReply, TREE_ANSWER } from "../support/agentTree.js";
import { startOpenAiServer } from "../support/openaiServer.js";
import { PROVIDERS } from "../support/providers.js";
import { streamingAgent } from "./fleet.js";
import { ANSWER, gate, gatedAgent as agent, gatedEffects as effects } from "./gatedStream.js";
import { clusterForFile } from "./cluster.js";

const WORKER_SCRIPT = fileURLToPath(new URL("./streamWorker.ts", import.meta.url));

// Reads a stream into `into` as parts come; resolves when it ends.
async function collect(stream: AsyncIterable<StreamPart>, into: StreamPart[]): Promise<StreamPart[]> {
  for await (const part of stream) into.push(part);
  return into;
}

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const textOf = (parts: StreamPart[]) =>
  parts
    .filter((p) => p.type === "text-delta")
    .map((p) => p.delta)
    .join("");
const shape = (parts: StreamPart[]) =>
  parts.map(({ index, type, stepId, delta, id }) => ({ index, type, stepId, delta, id }));

const cluster = clusterForFile();

async function fleet(options: { streamKeepMs?: number; approval?: boolean } = {}) {
  const schema = cluster.schema("streams");
  const open = () =>
    postgresStores({
      url: cluster.server.url,
      schema,
      pollMs: 100,
      ...(options.streamKeepMs === undefined ? {} : { streamKeepMs: options.streamKeepMs }),
    });
  const gates = new Map<string, Promise<void>>();
  const workerStores = await open();
  const worker: Worker = await createWorker({
    stores: workerStores,
    logics: [agent],
    effects: effects(gates, options.approval),
    concurrency: 4,
    leaseMs: 2_000,
    pollMs: 100,
    drainMs: 2_000,
    signals: [],
  });
  const webStores: PostgresStores[] = [];
  const web = async () => {
    const stores = await open();
    webStores.push(stores);
    return createApp(defineConfig({ stores, effects: {} }));
  };
  // The stream items of an execution (those whose JSON text holds `containing`).
  const items = async (executionId: string, containing = "") =>
    Number(
      (
        await workerStores.db.query<{ n: string }>(
          `SELECT count(*) AS n FROM "${schema}".stream_items WHERE execution_id = $1 AND strpos(item, $2) > 0`,
          [executionId, containing],
        )
      ).rows[0]!.n,
    );
  return {
    schema,
    gates,
    worker,
    workerStores,
    web,
    items,
    async close() {
      await worker.stop();
      for (const stores of webStores) await stores.close();
      await workerStores.close();
    },
  };
}

describe("app.stream across processes (PostgreSQL)", () => {
  it("a web app follows a worker's run live: deltas before the step ends, then the records, then the end", async () => {
    const f = await fleet();
    try {
      const app = await f.web();
      const g = gate();
      f.gates.set("live", g.opened);
      await app.submit(agent, { executionId: "live", input: { prompt: "owls" } });
      const parts: StreamPart[] = [];
      const done = collect(app.stream("live"), parts);
      // Before the gate opens, the answer's first two chunks reached the web app: only the worker's feed has them.
      await until(() => textOf(parts).includes(ANSWER.slice(0, 16)), "the first chunks at the web app");
      expect(parts.some((p) => p.type === "tool-result" && p.id === "call-live")).toBe(true);
      expect((await f.workerStores.events.getExecution("live"))?.status).toBe("running");
      g.open();
      await done;
      expect(textOf(parts)).toBe(`Looking it up.${ANSWER}`);
      expect(parts.map((p) => p.index)).toEqual(parts.map((_, i) => i));
      expect(parts.filter((p) => p.type === "finish-step")).toHaveLength(2);
      expect(await app.result("live")).toMatchObject({ text: ANSWER });
      // The same stream as the AI SDK's UI message stream (what a route hands useChat), from the web app.
      const chunks: { type: string; delta?: string }[] = [];
      const reader = app.stream("live").toUIMessageStream().getReader();
      for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
      const uiText = chunks.filter((c) => c.type === "text-delta").map((c) => c.delta);
      expect(uiText.join("")).toBe(`Looking it up.${ANSWER}`);
      expect(chunks.at(-1)?.type).toBe("finish");
    } finally {
      await f.close();
    }
  });

  it("a publisher slower than the log: records wait for the deltas before them, not handed at a quiet poll", async () => {
    const f = await fleet();
    try {
      // Every item reaches the table 120 ms after it was published; the log's appends do not wait.
      const feed = f.workerStores.streams;
      const publish = feed.publish.bind(feed);
      feed.publish = (executionId, item) => void setTimeout(() => publish(executionId, item), 120);
      const app = await f.web();
      const g = gate();
      f.gates.set("slow", g.opened);
      await app.submit(agent, { executionId: "slow", input: { prompt: "owls" } });
      const parts: StreamPart[] = [];
      const done = collect(app.stream("slow"), parts);
      await until(() => textOf(parts).includes(ANSWER.slice(0, 16)), "the first chunks at the web app");
      // Quiet for several polls while the model waits, then the step ends and its deltas are on their way.
      await new Promise((resolve) => setTimeout(resolve, 500));
      g.open();
      await done;
      expect(textOf(parts)).toBe(`Looking it up.${ANSWER}`);
    } finally {
      await f.close();
    }
  });

  it("a stream opened mid-step has the step's text from its start, and a second app gives the same parts at the same indices", async () => {
    const f = await fleet();
    try {
      const g = gate();
      f.gates.set("mid", g.opened);
      const submitter = await f.web();
      await submitter.submit(agent, { executionId: "mid", input: { prompt: "owls" } });
      // Held at the gate: the answer's first chunks are in the database, nobody has streamed it yet.
      await until(
        async () => (await f.items("mid", ANSWER.slice(8, 16))) === 1,
        "the second chunk in the stream items",
      );
      const first: StreamPart[] = [];
      const late = await f.web();
      const reading = collect(late.stream("mid"), first);
      await until(() => textOf(first).includes(ANSWER.slice(0, 16)), "the first chunks at the late app");
      g.open();
      await reading;
      expect(textOf(first)).toBe(`Looking it up.${ANSWER}`);
      // A client that saw k parts reconnects to another web server with from: k.
      const k = 5;
      const other = await f.web();
      const rest = await collect(other.stream("mid", { from: k }), []);
      expect(shape(rest)).toEqual(shape(first.slice(k)));
    } finally {
      await f.close();
    }
  });

  it("what was streamed is removed streamKeepMs after the end; a stream opened then rebuilds the turns from the journal", async () => {
    const f = await fleet({ streamKeepMs: 100 });
    try {
      const app = await f.web();
      await app.submit(agent, { executionId: "gone", input: { prompt: "owls" } });
      const live = await collect(app.stream("gone"), []);
      await until(async () => (await f.items("gone")) === 0, "the stream items removed");
      const rebuilt = await collect((await f.web()).stream("gone"), []);
      expect(textOf(rebuilt)).toBe(textOf(live));
      expect(rebuilt.filter((p) => p.type === "text-delta")).toHaveLength(2); // each step's text whole
    } finally {
      await f.close();
    }
  });

  it("a turn's items are removed streamKeepMs after it parks, while the execution waits for a human", async () => {
    const f = await fleet({ streamKeepMs: 100, approval: true });
    try {
      const app = await f.web();
      await app.submit(agent, { executionId: "parked", input: { prompt: "owls" } });
      const parts: StreamPart[] = [];
      void collect(app.stream("parked"), parts);
      await until(() => parts.some((p) => p.type === "tool-approval-request"), "the approval request at the web app");
      await until(async () => (await f.items("parked")) === 0, "the parked turn's items removed");
      expect((await f.workerStores.events.getExecution("parked"))?.status).toBe("running");
      expect(textOf(parts)).toBe("Looking it up.");
    } finally {
      await f.close();
    }
  });

  it("an execution that streams nothing is followed by its log to its end", async () => {
    const f = await fleet();
    try {
      const app = await f.web();
      const quiet = agentLoop$({ id: "quiet", model: "plain", tools: [], maxTurns: 1, warnTranscriptBytes: false });
      await f.worker.stop();
      const worker = await createWorker({
        stores: f.workerStores,
        logics: [quiet],
        effects: { plain: createLlmEffect({ id: "plain", generate: async () => ({ text: "no deltas" }) }) },
        concurrency: 1,
        leaseMs: 2_000,
        pollMs: 100,
        drainMs: 2_000,
        signals: [],
      });
      try {
        await app.submit(quiet, { executionId: "q", input: { prompt: "hi" } });
        const parts = await collect(app.stream("q"), []);
        expect(textOf(parts)).toBe("no deltas");
        expect(await f.items("q")).toBe(0);
      } finally {
        await worker.stop();
      }
    } finally {
      await f.close();
    }
  });

  it("a worker SIGKILLed mid-stream: the web stream restarts the step with a retry part and ends with the whole answer from the worker that took over", async () => {
    // The first request streams two chunks and is held open; the taken-over step's request streams the whole answer.
    const model = await startOpenAiServer(({ n }) =>
      n === 0 ? { text: ANSWER, chunkChars: 8, holdAfterChunks: 3 } : { text: ANSWER, chunkChars: 8 },
    );
    const schema = cluster.schema("takeover");
    const stores = await postgresStores({ url: cluster.server.url, schema, pollMs: 100 });
    const children: LiveChild[] = [];
    const worker = async (name: string) => {
      const config = { url: cluster.server.url, schema, baseURL: model.baseURL, name };
      const child = new LiveChild(
        spawn(process.execPath, ["--import", "tsx", WORKER_SCRIPT, JSON.stringify(config)], {
          stdio: ["ignore", "pipe", "pipe"],
        }),
      );
      children.push(child);
      await child.waitFor((out) => out.includes(`ready ${name}`), 60_000);
      return child;
    };
    try {
      const first = await worker("w1");
      const app = createApp(defineConfig({ stores, effects: {} }));
      await app.submit(streamingAgent, { executionId: "t", input: { prompt: "owls" } });
      const parts: StreamPart[] = [];
      const reading = collect(app.stream("t"), parts);
      await until(() => textOf(parts) === ANSWER.slice(0, 16), "the held stream's chunks at the web app", 60_000);
      first.child.kill("SIGKILL");
      await first.exited;
      await worker("w2");
      await reading;
      const retry = parts.findLastIndex((p) => p.type === "retry");
      expect(retry).toBeGreaterThan(0);
      expect(textOf(parts.slice(0, retry))).toBe(ANSWER.slice(0, 16));
      expect(textOf(parts.slice(retry))).toBe(ANSWER);
      expect(parts.map((p) => p.index)).toEqual(parts.map((_, i) => i));
      expect(parts.at(-1)?.type).toBe("finish-step");
      expect(await app.result("t")).toMatchObject({ text: ANSWER });
      expect(model.requests).toHaveLength(2);
    } finally {
      for (const child of children) child.child.kill("SIGKILL");
      await Promise.all(children.map((c) => c.exited));
      await stores.close();
      await model.close();
    }
  });

  it("a web app follows a tree of agents on two workers: the sub-agents started after the stream opened join it, tagged", async () => {
    const model = await startOpenAiServer(treeReply);
    const schema = cluster.schema("tree");
    const open = () => postgresStores({ url: cluster.server.url, schema, pollMs: 100 });
    const all: PostgresStores[] = [];
    const workers: Worker[] = [];
    try {
      for (let n = 0; n < 2; n++) {
        const stores = await open();
        all.push(stores);
        workers.push(
          await createWorker({
            stores,
            logics: [orchestrator],
            effects: {
              model: createLlmEffect(fromAiSdk(PROVIDERS[2]!.model(model.baseURL))),
              search: createToolEffect(async ({ q }) => ({ hits: [finding(q)] }), { inputSchema: searchInput }),
            },
            concurrency: 2,
            leaseMs: 2_000,
            pollMs: 100,
            drainMs: 2_000,
            signals: [],
          }),
        );
      }
      const stores = await open();
      all.push(stores);
      const app = createApp(defineConfig({ stores, effects: {} }));
      await app.submit(orchestrator, { executionId: "tree", input: { prompt: "owls and bats?" } });
      const parts = await collect(app.stream("tree"), []);
      expect(parts.map((p) => p.index)).toEqual(parts.map((_, i) => i));
      for (const [j, q] of ["owls", "bats"].entries()) {
        const own = parts.filter((p) => p.executionId === `tree/tool:0:${j}`);
        expect(own.every((p) => p.agent === "researcher" && p.parentToolCallId === `r_${q}`)).toBe(true);
        expect(textOf(own)).toBe(finding(q));
        expect(own.filter((p) => p.type === "text-delta").length).toBeGreaterThan(1); // streamed, not whole
      }
      expect(textOf(parts.filter((p) => p.executionId === "tree/handoff"))).toBe(TREE_ANSWER);
      const answers = parts.filter((p) => p.type === "tool-result" && p.executionId === undefined);
      expect(answers.map((p) => [p.id, p.output])).toEqual(
        expect.arrayContaining([
          ["r_owls", finding("owls")],
          ["r_bats", finding("bats")],
        ]),
      );
      expect(await app.result("tree")).toMatchObject({ text: TREE_ANSWER });
      // A tree is read by its root's index, never by listing the catalogue: a lead's stream, app.executions({ root }).
      stores.events.listExecutions = () => Promise.reject(new Error("the whole catalogue was listed"));
      const ids = async (root: string) => (await app.executions({ root })).map((info) => info.executionId);
      expect(await ids("tree")).toEqual(["tree", "tree/handoff", "tree/tool:0:0", "tree/tool:0:1"]);
      expect(await ids("tree/tool:0:1")).toEqual(["tree/tool:0:1"]);
      expect(await ids("nothing")).toEqual([]);
      const again = await collect(createApp(defineConfig({ stores, effects: {} })).stream("tree"), []);
      expect(textOf(again.filter((p) => p.executionId === "tree/handoff"))).toBe(TREE_ANSWER);
    } finally {
      for (const worker of workers) await worker.stop();
      for (const stores of all) await stores.close();
      await model.close();
    }
  });

  it("a bad streamKeepMs is a ConfigError naming it, before anything connects", async () => {
    await expect(postgresStores({ url: cluster.server.url, streamKeepMs: -1 })).rejects.toMatchObject({
      name: "ConfigError",
      message: expect.stringContaining("postgresStores.streamKeepMs"),
    });
  });
});
