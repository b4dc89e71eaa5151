// `loomwork ls` and `loomwork log` on a real journal, run as a user runs them.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMachine } from "xstate";
import { fsStores } from "../../adapters/fs/index.js";
import { expandRecords } from "../../stores/recordFormat.js";
import type { StoredRecord } from "../../stores/types.js";
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  simulatedClock,
  type Model,
} from "../../index.js";
import { ANSI, cli, makeJournal, type Journal } from "./support.js";

let journal: Journal;
beforeAll(async () => void (journal = await makeJournal()));
afterAll(() => rm(journal.dir, { recursive: true, force: true }));

describe("loomwork ls", () => {
  it("lists every execution with its logic, subject, status, records and bytes on disk", async () => {
    const { code, stdout, stderr } = await cli(["ls", "--dir", journal.dir]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(/^EXECUTION +LOGIC +SUBJECT +STATUS +RECORDS +ON DISK +STARTED +LAST WRITE$/m);
    expect(stdout).toMatch(/^research-done +researcher +user-42 +done +29 +[\d.]+ KiB/m);
    expect(stdout).toMatch(/^research-unfinished +researcher +— +running +\d+ /m);
    expect(stdout).toMatch(/^bulk-export +exporter +— +done +11 /m);
    expect(stdout).toMatch(/3 executions, [\d.]+ KiB on disk, 1 unfinished/);
    expect(stdout).not.toMatch(ANSI);
  });

  it("filters by status and subject, and prints JSON for scripts", async () => {
    const running = await cli(["ls", "--dir", journal.dir, "--status", "running", "--json"]);
    expect(running.code).toBe(0);
    expect(JSON.parse(running.stdout).map((e: { executionId: string }) => e.executionId)).toEqual([
      "research-unfinished",
    ]);
    const subject = JSON.parse((await cli(["ls", "--dir", journal.dir, "--subject", "user-42", "--json"])).stdout);
    expect(subject).toHaveLength(1);
    expect(subject[0]).toMatchObject({
      executionId: "research-done",
      subject: "user-42",
      status: "done",
      head: 29,
      logicId: "researcher",
    });
    expect(subject[0].diskBytes).toBeGreaterThan(0);
  });

  it("lists ids in natural order: chat-2 before chat-10", async () => {
    const dir = await mkdtemp(join(tmpdir(), "loomwork-cli-natural-"));
    try {
      const stores = await fsStores({ dir });
      // One instant for all: the order is the ids' alone.
      const app = createApp(defineConfig({ stores, effects: {}, clock: simulatedClock(1_000) }));
      const machine = createMachine({ id: "chat", initial: "done", states: { done: { type: "final" } } });
      for (const id of ["chat-10", "chat-2", "chat-1"]) await app.start(machine, { executionId: id });
      await app.close();
      await stores.close();
      const { code, stdout } = await cli(["ls", "--dir", dir, "--json"]);
      expect(code).toBe(0);
      expect(JSON.parse(stdout).map((e: { executionId: string }) => e.executionId)).toEqual([
        "chat-1",
        "chat-2",
        "chat-10",
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("reads LOOMWORK_DIR when --dir is not given", async () => {
    const { code, stdout } = await cli(["ls", "--json"], { LOOMWORK_DIR: journal.dir });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toHaveLength(3);
  });
});

describe("loomwork log", () => {
  it("prints a readable timeline: start, step outcomes, transitions, end", async () => {
    const { code, stdout } = await cli(["log", "research-done", "--dir", journal.dir]);
    expect(code).toBe(0);
    const lines = stdout.split("\n");
    expect(lines[0]).toMatch(/^research-done · researcher · done · 29 records · started .* · subject user-42$/);
    expect(stdout).toMatch(/^ +1 +\+0 ms +▶ started +input \{"prompt":"How do barn owls/m);
    expect(stdout).toMatch(/^ +2 +↳ \(init\) → thinking +xstate\.init$/m);
    expect(stdout).toMatch(/^ +3 +\+\d+ ms +✓ turn:0:model +model +"Let me search.*→ search\(/m);
    expect(stdout).toMatch(/✓ turn:1:tool:0 +fetchPage +tainted\(web\) \{"title":"Konishi/);
    expect(stdout).toMatch(/↳ acting → acting +xstate\.done\.actor\.tool:1:0/);
    expect(stdout).toMatch(/^ +29 +■ ended done output \{"text":"Barn owls hunt by ear/m);
    expect(stdout).not.toMatch(ANSI);
  });

  it("opens sealed records with --decrypt, with the key from the directory; without it they stay sealed", async () => {
    const dir = await mkdtemp(join(tmpdir(), "loomwork-cli-sealed-"));
    try {
      const stores = await fsStores({ dir });
      const app = createApp(defineConfig({ stores, effects: {}, security: { crypto: { keys: stores.keys } } }));
      const machine = createMachine({
        id: "secret",
        initial: "waiting",
        states: { waiting: { on: { NOTE: "done" } }, done: { type: "final" } },
      });
      const actor = await app.start(machine, {
        executionId: "sealed-1",
        subject: "user-9",
        input: { diagnosis: "confidential words" },
      });
      await actor.sendAsync({ type: "NOTE", text: "more confidential words" });
      await app.result("sealed-1");
      await app.close();
      await stores.close();
      const sealed = await cli(["log", "sealed-1", "--dir", dir]);
      expect(sealed.code).toBe(0);
      expect(sealed.stdout).toContain("sealed payload");
      expect(sealed.stdout).not.toContain("confidential words");
      const opened = await cli(["log", "sealed-1", "--decrypt", "--dir", dir]);
      expect(opened.code, opened.stderr).toBe(0);
      expect(opened.stdout).toContain('"confidential words"');
      expect(opened.stdout).toContain("more confidential words");
      expect(opened.stdout).not.toContain("sealed payload");
      const json = JSON.parse((await cli(["log", "sealed-1", "--decrypt", "--json", "--dir", dir])).stdout);
      expect(json.records[0]).toMatchObject({
        type: "loom.execution.started",
        input: { diagnosis: "confidential words" },
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("shows a claim-check envelope as a ref with its digest", async () => {
    const { stdout } = await cli(["log", "bulk-export", "--dir", journal.dir]);
    expect(stdout).toMatch(
      /✓ turn:0:tool:0 +exportRows +⧉ ref sha256:9f86d081884c…0a08 \(18\.0 KiB\) digest \{"preview":/,
    );
    const full = await cli(["log", "bulk-export", "--dir", journal.dir, "--full"]);
    expect(full.stdout).toContain(
      "⧉ ref sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 (18.0 KiB)",
    );
  });

  it("prints an AI SDK reply (fromAiSdk's extra keys) in the short form, the extra keys left out", async () => {
    const dir = await mkdtemp(join(tmpdir(), "loomwork-cli-aisdk-"));
    try {
      const stores = await fsStores({ dir });
      // What fromAiSdk journals: finishReason, reasoning, providerMetadata, the response's id and model, and the
      // parts with the provider's metadata (OpenAI Responses' reasoning items) beside text, toolCalls and usage.
      let turn = 0;
      const model: Model = {
        id: "openai:gpt",
        async generate() {
          const extra = {
            finishReason: "stop",
            reasoning: "hmm",
            providerMetadata: { openai: { responseId: "r1" } },
            response: { id: "resp_1", modelId: "gpt-5-mini-2025-08-07" },
            parts: [{ type: "reasoning" as const, text: "hmm", providerMetadata: { openai: { itemId: "rs_1" } } }],
          };
          return turn++ === 0
            ? {
                toolCalls: [{ toolCallId: "call_1", toolName: "search", input: { q: "owls" } }],
                usage: { inputTokens: 212, outputTokens: 31 },
                ...extra,
              }
            : { text: "Owls hunt by ear.", usage: { inputTokens: 300, outputTokens: 9 }, ...extra };
        },
      };
      const app = createApp(
        defineConfig({
          stores,
          effects: { model: createLlmEffect(model), search: createToolEffect(async () => ({ hits: 1 })) },
        }),
      );
      await app.start(agentLoop$({ id: "ai", model: "model", tools: ["search"] }), {
        executionId: "ai-1",
        input: { prompt: "owls?" },
      });
      await app.result("ai-1");
      await app.close();
      await stores.close();
      const { code, stdout } = await cli(["log", "ai-1", "--dir", dir]);
      expect(code).toBe(0);
      expect(stdout).toMatch(/✓ turn:0:model +model +→ search\(\{"q":"owls"\}\) · 212\+31 tokens$/m);
      expect(stdout).toMatch(/✓ turn:1:model +model +"Owls hunt by ear\." · 300\+9 tokens$/m);
      expect(stdout).not.toContain("finishReason");
      expect(stdout).not.toContain("providerMetadata");
      expect(stdout).not.toContain("rs_1");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("marks an unfinished execution", async () => {
    const { code, stdout } = await cli(["log", "research-unfinished", "--dir", journal.dir]);
    expect(code).toBe(0);
    expect(stdout).toContain(
      '⋯ unfinished: what was in flight has no outcome yet; it runs when an app calls app.resume("research-unfinished")',
    );
  });

  it("prints the records as app.log reads them with --json", async () => {
    const { stdout } = await cli(["log", "research-done", "--dir", journal.dir, "--json"]);
    const printed = JSON.parse(stdout);
    const stores = await fsStores({ dir: journal.dir });
    try {
      // Schema 3 stores a transition without `from` (stores/recordFormat.ts): printed whole, as app.log returns it.
      expect(printed.records).toEqual(expandRecords(await stores.events.read("research-done")));
      expect(printed.records.find((r: StoredRecord) => r.type === "loom.transition" && r.from !== null)).toMatchObject({
        from: expect.any(String),
        event: expect.any(String),
      });
      expect(printed.execution).toEqual(await stores.events.getExecution("research-done"));
    } finally {
      await stores.close();
    }
  });

  it("colours only when asked to off a TTY (FORCE_COLOR), and --no-color wins", async () => {
    expect((await cli(["log", "research-done", "--dir", journal.dir], { FORCE_COLOR: "1" })).stdout).toMatch(ANSI);
    expect(
      (await cli(["log", "research-done", "--dir", journal.dir, "--no-color"], { FORCE_COLOR: "1" })).stdout,
    ).not.toMatch(ANSI);
  });
});

describe("loomwork ls --tree and stats --tree", () => {
  it("lists a tree's child executions under their parents, indented, verified from their start records; measures a tree", async () => {
    const { parent } = await import("../children/machines.js");
    const dir = await mkdtemp(join(tmpdir(), "loomwork-cli-tree-"));
    try {
      const stores = await fsStores({ dir });
      const app = createApp(
        defineConfig({ stores, effects: { double: createToolEffect(async (n: number) => n * 2) } }),
      );
      await app.start(parent, { executionId: "p1" });
      await app.result("p1");
      // A root whose id merely looks like a child's: not placed under p1.
      await app.start(createMachine({ id: "lone" }), { executionId: "p1/not-a-child" });
      await app.close();
      await stores.close();
      const { code, stdout } = await cli(["ls", "--dir", dir, "--tree"]);
      expect(code).toBe(0);
      const ids = stdout
        .split("\n")
        .slice(1)
        .filter((l) => /^\S|^ +└/.test(l) && !/execution/.test(l))
        .map((l) => l.split(/ {2,}/)[0]!.trimEnd());
      expect(ids).toEqual(["p1", " └ p1/w", "p1/not-a-child"]);
      const json = JSON.parse((await cli(["ls", "--dir", dir, "--tree", "--json"])).stdout);
      expect(json.find((e: { executionId: string }) => e.executionId === "p1/w")).toMatchObject({
        parentId: "p1",
        depth: 1,
      });
      expect(json.find((e: { executionId: string }) => e.executionId === "p1/not-a-child").parentId).toBeUndefined();
      // stats of a tree: the root and its child executions (not a root whose id only looks like a child's), summed.
      const tree = JSON.parse((await cli(["stats", "p1", "--tree", "--dir", dir, "--json"])).stdout);
      expect(tree.executions.map((r: { executionId: string }) => r.executionId)).toEqual(["p1", "p1/w"]);
      expect(tree.totals.records).toBe(tree.executions.reduce((n: number, r: { records: number }) => n + r.records, 0));
      const alone = JSON.parse((await cli(["stats", "p1", "--dir", dir, "--json"])).stdout);
      expect(alone.executions).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
