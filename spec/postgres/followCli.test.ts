// `loomwork follow <id> --postgres <url>` against a live fleet: a worker in this process runs an agent whose model
// streams a few chunks and then waits for the test's gate; the CLI, a spawned process as a user runs it, follows the
// execution through the schema (app.stream across processes, ADR 0019). What it prints before the gate opens can only
// have come live from the worker.
import { describe, expect, it } from "vitest";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { createWorker, postgresStores, type PostgresStores, type Worker } from "../../adapters/postgres/index.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { cli, spawnCli } from "../cli/support.js";
import { finding, orchestrator, searchInput, treeReply, TREE_ANSWER } from "../support/agentTree.js";
import { startOpenAiServer } from "../support/openaiServer.js";
import { PROVIDERS } from "../support/providers.js";
import { ANSWER, gate, gatedAgent as agent, gatedEffects as effects } from "./gatedStream.js";
import { clusterForFile } from "./cluster.js";
import { freshSchema } from "./server.js";

const cluster = clusterForFile();

// A worker with stores of its own, and an app on other stores that submits (as a web server does).
async function fleet() {
  const schema = cluster.schema("follow");
  const gates = new Map<string, Promise<void>>();
  const workerStores = await postgresStores({ url: cluster.server.url, schema, pollMs: 100 });
  const worker: Worker = await createWorker({
    stores: workerStores,
    logics: [agent],
    effects: effects(gates),
    concurrency: 2,
    leaseMs: 2_000,
    pollMs: 100,
    drainMs: 2_000,
    signals: [],
  });
  const webStores: PostgresStores = await postgresStores({ url: cluster.server.url, schema, pollMs: 100 });
  const app = createApp(defineConfig({ stores: webStores, effects: {} }));
  return {
    schema,
    app,
    worker,
    args: (executionId: string) => ["follow", executionId, "--postgres", cluster.server.url, "--schema", schema],
    async submit(executionId: string) {
      const g = gate();
      gates.set(executionId, g.opened);
      await app.submit(agent, { executionId, input: { prompt: "How do owls hunt?" } });
      return g;
    },
    status: async (executionId: string) => (await workerStores.events.getExecution(executionId))?.status,
    async close() {
      await worker.stop();
      await app.close();
      await webStores.close();
      await workerStores.close();
    },
  };
}

describe("loomwork follow --postgres", () => {
  it("prints a worker's deltas as they stream, its tool call and result, then the whole answer and exits 0", async () => {
    const f = await fleet();
    let g: { open: () => void } | undefined;
    try {
      g = await f.submit("chat-42");
      const run = spawnCli(f.args("chat-42"));
      // Before the gate opens: the answer's first two chunks, live from the worker (the step has no record yet).
      await run.waitFor(`⋯ turn:1:model ${ANSWER.slice(0, 16)}`);
      expect(run.stdout).not.toContain(ANSWER.slice(0, 24));
      expect(await f.status("chat-42")).toBe("running");
      expect(run.stdout).toMatch(/^chat-42 · streamer · following since /);
      expect(run.stdout).toContain("⋯ turn:0:model Looking it up.");
      expect(run.stdout).toMatch(/→ call +turn:0:model +search \{"q":"owls"\} call-chat-42/);
      expect(run.stdout).toMatch(/✓ result turn:0:tool:0 +search \{"hits":\["owls hear in three dimensions"\]\}/);
      g.open();
      expect(await run.exited, run.stderr).toBe(0);
      expect(run.stdout).toContain(`⋯ turn:1:model ${ANSWER}\n`);
      expect(run.stdout).toContain("■ ended done");
    } finally {
      g?.open();
      await f.close();
    }
  }, 60_000);

  it("an execution stopped while followed: its abort line with the reason, exit 1", async () => {
    const f = await fleet();
    let g: { open: () => void } | undefined;
    try {
      g = await f.submit("chat-44");
      const run = spawnCli(f.args("chat-44"));
      await run.waitFor(ANSWER.slice(0, 16));
      // Stopped where it runs: the worker's app.
      await f.worker.app.stop("chat-44", "the user left");
      expect(await run.exited, run.stderr).toBe(1);
      expect(run.stdout).toMatch(/■ ended stopped the user left/);
    } finally {
      g?.open();
      await f.close();
    }
  }, 60_000);

  it("Ctrl-C while the execution runs: exit 130, the execution runs on", async () => {
    const f = await fleet();
    let g: { open: () => void } | undefined;
    try {
      g = await f.submit("chat-45");
      const run = spawnCli(f.args("chat-45"));
      await run.waitFor(ANSWER.slice(0, 16));
      run.kill("SIGINT");
      expect(await run.exited, run.stderr).toBe(130);
      expect(await f.status("chat-45")).toBe("running");
      g.open();
      await expect(f.app.result("chat-45")).resolves.toMatchObject({ text: ANSWER });
    } finally {
      g?.open();
      await f.close();
    }
  }, 60_000);

  it("a tree: the sub-agents' deltas under their agent and execution, the lead's tool results, exit 0", async () => {
    const model = await startOpenAiServer(treeReply);
    const schema = cluster.schema("followtree");
    const g = gate();
    const workerStores = await postgresStores({ url: cluster.server.url, schema, pollMs: 100 });
    const worker = await createWorker({
      stores: workerStores,
      logics: [orchestrator],
      effects: {
        model: createLlmEffect(fromAiSdk(PROVIDERS[2]!.model(model.baseURL))),
        // The researchers wait here until the CLI follows the tree: what they say after is live.
        search: createToolEffect(async ({ q }) => (await g.opened, { hits: [finding(q)] }), {
          inputSchema: searchInput,
        }),
      },
      concurrency: 4,
      leaseMs: 2_000,
      pollMs: 100,
      drainMs: 2_000,
      signals: [],
    });
    try {
      await worker.app.submit(orchestrator, { executionId: "tree", input: { prompt: "owls and bats?" } });
      const run = spawnCli(["follow", "tree", "--postgres", cluster.server.url, "--schema", schema]);
      await run.waitFor(/→ call +turn:0:model +researcher .*r_bats/);
      g.open();
      expect(await run.exited, run.stderr).toBe(0);
      // Each source's runs of deltas (two researchers stream at once: their runs interleave, each under its label).
      const said = (agent: string, executionId: string) =>
        run.stdout
          .split("\n")
          .map((l) => / {18}⋯ (\S+) (\S+) \S+ (.*)$/.exec(l))
          .filter((m) => m?.[1] === agent && m[2] === executionId)
          .map((m) => m![3])
          .join("");
      expect(said("researcher", "tree/tool:0:0")).toBe(finding("owls"));
      expect(said("researcher", "tree/tool:0:1")).toBe(finding("bats"));
      expect(said("writer", "tree/handoff")).toBe(TREE_ANSWER);
      expect(run.stdout).toMatch(/✓ result \S+ +researcher "owls: hunt by ear"/);
      expect(run.stdout).toContain("■ ended done");
    } finally {
      g.open();
      await worker.stop();
      await workerStores.close();
      await model.close();
    }
  }, 60_000);

  it("prints what the worker streamed as data: control characters escaped, in the id, the deltas and the values", async () => {
    // Retitles the terminal (OSC 0 ... BEL), clears it (CSI 2 J), a C1 CSI, DEL, a backspace and a carriage return.
    const hostile = "\u001b]0;pwned\u0007\u001b[2J\u009b31m\u007f\b\r";
    const id = `chat${hostile}1`;
    const schema = cluster.schema("followesc");
    const workerStores = await postgresStores({ url: cluster.server.url, schema, pollMs: 100 });
    const g = gate();
    const worker = await createWorker({
      stores: workerStores,
      logics: [agent],
      effects: {
        model: createLlmEffect({
          id: "hostile",
          async generate(_request, ctx) {
            const turn = Number(/#turn:(\d+):model$/.exec(ctx.stepId)?.[1] ?? 0);
            if (turn > 0) return { text: `done${hostile}` };
            ctx.emitDelta?.({ type: "text-delta", delta: `Owls${hostile}\nhunt` });
            await g.opened;
            // As a streaming provider does: the call as a part too (a live step's parts are its deltas).
            const call = { id: "c1", toolName: "search", input: { q: hostile } };
            ctx.emitDelta?.({ type: "tool-call", ...call });
            return { toolCalls: [call] };
          },
        }),
        search: createToolEffect(async () => ({ hits: [hostile] })),
      },
      concurrency: 1,
      leaseMs: 2_000,
      pollMs: 100,
      drainMs: 2_000,
      signals: [],
    });
    try {
      await worker.app.submit(agent, { executionId: id, input: { prompt: "owls" } });
      const run = spawnCli(["follow", id, "--postgres", cluster.server.url, "--schema", schema]);
      await run.waitFor("hunt");
      g.open();
      expect(await run.exited, run.stderr).toBe(0);
      // Every control character but the newline that ends a line is written out.
      // eslint-disable-next-line no-control-regex
      expect(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.exec(run.stdout)?.[0] ?? "none", run.stdout).toBe("none");
      const shown = "\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u007f\\b\\r";
      expect(run.stdout).toContain(`chat${shown}1 · streamer`);
      expect(run.stdout).toContain(`Owls${shown}\nhunt`);
      expect(run.stdout).toContain('search {"q":"\\u001b]0;pwned');
    } finally {
      g.open();
      await worker.stop();
      await workerStores.close();
    }
  }, 60_000);

  it("--json: one { delta } a line, live; the text deltas joined are the answer", async () => {
    const f = await fleet();
    let g: { open: () => void } | undefined;
    try {
      g = await f.submit("chat-43");
      const run = spawnCli([...f.args("chat-43"), "--json"]);
      await run.waitFor(JSON.stringify(ANSWER.slice(8, 16)));
      expect(await f.status("chat-43")).toBe("running");
      g.open();
      expect(await run.exited, run.stderr).toBe(0);
      const parts = run.stdout
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { delta: { index: number; type: string; delta?: string } }).delta);
      expect(parts.map((p) => p.index)).toEqual(parts.map((_, i) => i));
      const text = parts.filter((p) => p.type === "text-delta").map((p) => p.delta);
      expect(text.join("")).toBe(`Looking it up.${ANSWER}`);
      expect(parts.map((p) => p.type)).toEqual(expect.arrayContaining(["tool-call", "tool-result", "finish-step"]));
    } finally {
      g?.open();
      await f.close();
    }
  }, 60_000);

  it("an unknown execution exits 3 and names it; a schema with no fleet exits 3 and creates nothing; --schema alone exits 2", async () => {
    const f = await fleet();
    try {
      const missing = await cli(f.args("chat-nope"));
      expect(missing.code, missing.stderr).toBe(3);
      expect(missing.stderr).toContain(`no execution "chat-nope" in schema "${f.schema}"`);
      const noFleet = freshSchema("nofleet");
      const elsewhere = await cli(["follow", "chat-42", "--postgres", cluster.server.url, "--schema", noFleet]);
      expect(elsewhere.code, elsewhere.stderr).toBe(3);
      expect(elsewhere.stderr).toContain(`no fleet in schema "${noFleet}"`);
      const alone = await cli(["follow", "chat-42", "--schema", f.schema]);
      expect(alone.code, alone.stderr).toBe(2);
      expect(alone.stderr).toContain("--schema goes with --postgres");
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: cluster.server.url });
      await client.connect();
      try {
        const { rows } = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [noFleet]);
        expect(rows).toHaveLength(0);
      } finally {
        await client.end();
      }
    } finally {
      await f.close();
    }
  }, 60_000);
});
