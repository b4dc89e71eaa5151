// The operating commands (send, approve, deny, stop, resume) and `follow`, run as real CLI processes
// beside an app that holds the journal: through its control socket (serveControl), refused clearly when
// it serves none, and journaled by the CLI itself with --logic when no app holds the journal.
import { spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deltaSinkOf } from "../../actors/agents/deltas.js";
import { fsStores, serveControl, type ControlServer, type FsStores } from "../../adapters/fs/index.js";
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  type App,
  type Model,
} from "../../index.js";
import { tempDirs } from "../support/tempDirs.js";
import { gate } from "./operateMachines.js";
import { cli, spawnCli } from "./support.js";

const { tempDir, removeTempDirs } = tempDirs("cli-operate");
afterAll(removeTempDirs);

const ops = agentLoop$({ id: "ops", model: "model", tools: ["deleteFile"] });
const settle = async (check: () => boolean) => {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
};

/** A model that asks to delete a file on its first turn and answers with what the tool said on its second. */
const deleter: Model = {
  id: "deleter",
  async generate(request, ctx) {
    const last = request.messages.at(-1) as { role?: string; content?: unknown } | undefined;
    if (/:0:model$/.test(ctx.stepId) || last?.role === "user")
      return { toolCalls: [{ toolName: "deleteFile", input: { path: "/etc/hosts" } }] };
    return { text: `tool said ${JSON.stringify(last?.content)}` };
  },
};

describe("through the running app's control socket", () => {
  let dir: string;
  let stores: FsStores;
  let app: App;
  let control: ControlServer;
  let release: () => void = () => undefined;

  // A streaming model: "Owls " at once, the rest only once the test releases it.
  const streaming: Model = {
    id: "streaming",
    async generate(_request, ctx) {
      const emit = deltaSinkOf(ctx);
      emit?.({ type: "text-delta", delta: "Owls " });
      await new Promise<void>((resolve) => (release = resolve));
      emit?.({ type: "text-delta", delta: "hunt by ear." });
      return { text: "Owls hunt by ear." };
    },
  };

  beforeAll(async () => {
    dir = await tempDir("app");
    // An execution left unfinished by an app that quit: the serving app does not run it until told to.
    const first = await fsStores({ dir });
    const before = createApp(
      defineConfig({ stores: first, effects: { work: createToolEffect(async () => "unused") } }),
    );
    await before.start(gate, { executionId: "gate-left", input: {} });
    await before.close();
    await first.close();
    stores = await fsStores({ dir });
    app = createApp(
      defineConfig({
        stores,
        logics: [gate, ops],
        effects: {
          work: createToolEffect(async ({ text }: { text: string }) => `worked on ${text}`),
          model: createLlmEffect(deleter),
          stream: createLlmEffect(streaming),
          deleteFile: createToolEffect(async ({ path }: { path: string }) => ({ deleted: path }), {
            needsApproval: true,
          }),
        },
      }),
    );
    control = await serveControl(app, { dir: stores.dir });
  });
  afterAll(async () => {
    release();
    await control.close();
    await app.close();
    await stores.close();
  });

  it("send: the app journals the event and runs what it starts", async () => {
    const actor = await app.start(gate, { executionId: "gate-1", input: {} });
    const sent = await cli(["send", "gate-1", '{"type":"GO","text":"owls"}', "--dir", dir, "--json"]);
    expect(sent.stderr).toBe("");
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ executionId: "gate-1", op: "send", via: "app" });
    expect(await app.result("gate-1")).toEqual({ text: "owls", worked: "worked on owls" });
    expect(actor.getSnapshot().status).toBe("done");
    // It ended: a second send is refused, and says why.
    const again = await cli(["send", "gate-1", '{"type":"GO","text":"x"}', "--dir", dir, "--json"]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr).error).toMatchObject({
      code: "LOOM_CLI_ENDED",
      message: 'execution "gate-1" already ended (done)',
    });
  });

  it("send refuses bad JSON (2) and an unknown execution (3), before reaching the app", async () => {
    await app.start(gate, { executionId: "gate-2", input: {} });
    const bad = await cli(["send", "gate-2", "{type:GO}", "--dir", dir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("loomwork send: <event-json> is not JSON");
    const typeless = await cli(["send", "gate-2", '["GO"]', "--dir", dir]);
    expect(typeless.code).toBe(2);
    expect(typeless.stderr).toContain('must be a JSON object with a string "type"');
    const unknown = await cli(["send", "gate-3", '{"type":"GO"}', "--dir", dir]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain('no execution "gate-3"');
    expect(unknown.stderr).toContain('Did you mean "gate-1" or "gate-2"');
  });

  it("approve runs the parked tool; deny tells the model why; an id that waits for nothing is not found (3)", async () => {
    const approved = await app.start(ops, { executionId: "ops-yes", input: { prompt: "clean up" } });
    const denied = await app.start(ops, { executionId: "ops-no", input: { prompt: "clean up" } });
    await settle(
      () => approved.getSnapshot().value === "awaitingApproval" && denied.getSnapshot().value === "awaitingApproval",
    );
    const [yes] = JSON.parse((await cli(["approvals", "ops-yes", "--dir", dir, "--json"])).stdout);
    const [no] = JSON.parse((await cli(["approvals", "ops-no", "--dir", dir, "--json"])).stdout);
    const wrong = await cli(["approve", "ops-yes", "call_nope", "--dir", dir]);
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain(`no tool call "call_nope" waits for approval in "ops-yes"`);
    expect(wrong.stderr).toContain(`Waiting: ${yes.toolCallId} (deleteFile)`);
    const ok = await cli(["approve", "ops-yes", yes.toolCallId, "--dir", dir]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`approved ${yes.toolCallId} in ops-yes by the running app`);
    expect(await app.result("ops-yes")).toMatchObject({ text: expect.stringContaining('"deleted":"/etc/hosts"') });
    const refused = await cli(["deny", "ops-no", no.toolCallId, "--reason", "not on production hosts", "--dir", dir]);
    expect(refused.code, refused.stderr).toBe(0);
    expect(refused.stdout).toContain(`denied ${no.toolCallId} in ops-no`);
    expect(await app.result("ops-no")).toMatchObject({ text: expect.stringContaining("not on production hosts") });
    // Both ended: a late decision is refused as send refuses one (1, LOOM_CLI_ENDED), not "not found".
    for (const [verb, id, call] of [
      ["approve", "ops-yes", yes.toolCallId],
      ["deny", "ops-no", no.toolCallId],
    ] as const) {
      const late = await cli([verb, id, call, "--dir", dir, "--json"]);
      expect(late.code, late.stderr).toBe(1);
      expect(JSON.parse(late.stderr).error).toMatchObject({
        code: "LOOM_CLI_ENDED",
        message: `execution "${id}" already ended (done)`,
      });
    }
  });

  it("stop ends the execution as stopped, journaled by the app", async () => {
    await app.start(gate, { executionId: "gate-stop", input: {} });
    const stopped = await cli(["stop", "gate-stop", "--reason", "runaway costs", "--dir", dir, "--json"]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ op: "stop", via: "app", status: "stopped" });
    expect((await stores.events.getExecution("gate-stop"))?.status).toBe("stopped");
    expect((await app.log("gate-stop")).at(-1)).toMatchObject({ type: "loom.execution.ended", status: "stopped" });
  });

  it("resume has the app resume an unfinished execution it was not running", async () => {
    const resumed = await cli(["resume", "gate-left", "--dir", dir, "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ op: "resume", via: "app", status: "active", value: "waiting" });
    expect((await cli(["send", "gate-left", '{"type":"GO","text":"late"}', "--dir", dir])).code).toBe(0);
    expect(await app.result("gate-left")).toEqual({ text: "late", worked: "worked on late" });
  });

  it("follow prints the records as they are journaled and the model's live deltas, and exits 0 when it ends done", async () => {
    const loop = agentLoop$({ id: "owl", model: "stream", tools: [] });
    await app.start(loop, { executionId: "owl-1", input: { prompt: "How do owls hunt?" } });
    const following = spawnCli(["follow", "owl-1", "--dir", dir, "--no-color"]);
    await following.waitFor("▶ started");
    await following.waitFor("⋯ turn:0:model Owls ");
    expect(following.stdout).not.toContain("■ ended");
    release();
    await following.waitFor("■ ended done");
    expect(await following.exited).toBe(0);
    expect(following.stdout).toContain("hunt by ear.");
    expect(following.stdout).toMatch(/✓ turn:0:model +stream +"Owls hunt by ear\."/);
  });

  it("follow --json: one object per line, records and deltas; Ctrl-C ends it with 130", async () => {
    await app.start(gate, { executionId: "gate-follow", input: {} });
    const following = spawnCli(["follow", "gate-follow", "--dir", dir, "--json"]);
    await following.waitFor('"type":"loom.transition"');
    expect((await cli(["send", "gate-follow", '{"type":"GO","text":"json"}', "--dir", dir])).code).toBe(0);
    await following.waitFor('"type":"loom.execution.ended"');
    expect(await following.exited).toBe(0);
    // Each line is a record or a stream part (the app's stream of the execution may say it ended before the
    // tail reads the end record); the records come whole, in order, every seq once.
    const lines = following.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { record?: { seq: number; type: string }; delta?: unknown });
    for (const l of lines)
      expect(Object.keys(l).length === 1 && (l.record !== undefined || l.delta !== undefined), JSON.stringify(l)).toBe(
        true,
      );
    const records = lines.flatMap((l) => (l.record ? [l.record] : []));
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
    expect(records.map((r) => r.type)).toContain("loom.event.received");
    const waiting = await app.start(gate, { executionId: "gate-ctrl-c", input: {} });
    const interrupted = spawnCli(["follow", "gate-ctrl-c", "--dir", dir, "--json"]);
    await interrupted.waitFor('"type":"loom.transition"');
    interrupted.kill("SIGINT");
    expect(await interrupted.exited).toBe(130);
    expect(waiting.getSnapshot().value).toBe("waiting");
  });
});

describe("an app holds the journal and serves no control socket", () => {
  it("send, stop and resume exit 5 and say how to reach it; follow still works", async () => {
    const dir = await tempDir("locked");
    const stores = await fsStores({ dir });
    const app = createApp(defineConfig({ stores, effects: { work: createToolEffect(async () => "w") } }));
    try {
      const actor = await app.start(gate, { executionId: "gate-1", input: {} });
      for (const args of [
        ["send", "gate-1", '{"type":"GO","text":"x"}'],
        ["stop", "gate-1"],
        ["resume", "gate-1"],
      ]) {
        const { code, stderr } = await cli([...args, "--dir", dir, "--json"]);
        expect(code).toBe(5);
        const { error } = JSON.parse(stderr);
        expect(error.code).toBe("LOOM_CLI_APP_UNREACHABLE");
        expect(error.message).toContain(`held by a running app (pid ${process.pid} on `);
        expect(error.hint).toContain("serveControl");
      }
      const following = spawnCli(["follow", "gate-1", "--dir", dir, "--no-color"]);
      await following.waitFor("(init) → waiting");
      await actor.sendAsync({ type: "GO", text: "direct" });
      await following.waitFor("■ ended done");
      expect(await following.exited).toBe(0);
      expect(following.stdout).toContain("● event    GO");
    } finally {
      await app.close();
      await stores.close();
    }
  });
});

describe("no app holds the journal", () => {
  it("send --logic journals the event itself; the step it starts runs when an app resumes the execution", async () => {
    const dir = await tempDir("offline");
    let stores = await fsStores({ dir });
    let app = createApp(defineConfig({ stores, effects: { work: createToolEffect(async () => "w") } }));
    await app.start(gate, { executionId: "gate-1", input: {} });
    await app.close();
    await stores.close();

    const noLogic = await cli(["send", "gate-1", '{"type":"GO","text":"offline"}', "--dir", dir]);
    expect(noLogic.code).toBe(2);
    expect(noLogic.stderr).toContain("needs the machine");
    expect(noLogic.stderr).toContain("--logic <module>");
    const resumed = await cli(["resume", "gate-1", "--dir", dir, "--json"]);
    expect(resumed.code).toBe(1);
    expect(JSON.parse(resumed.stderr).error.code).toBe("LOOM_CLI_NO_APP");
    const sent = await cli([
      "send",
      "gate-1",
      '{"type":"GO","text":"offline"}',
      "--dir",
      dir,
      "--logic",
      "spec/cli/operateMachines.ts",
      "--json",
    ]);
    expect(sent.stderr).toBe("");
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ via: "journal", status: "active", value: "working" });

    stores = await fsStores({ dir });
    const worked: string[] = [];
    app = createApp(
      defineConfig({
        stores,
        logics: [gate],
        effects: {
          work: createToolEffect(async ({ text }: { text: string }) => (worked.push(text), `worked on ${text}`)),
        },
      }),
    );
    try {
      const log = await stores.events.read("gate-1");
      expect(log.filter((r) => r.type === "loom.event.received")).toMatchObject([
        { event: { type: "GO", text: "offline" } },
      ]);
      expect(log.some((r) => r.type === "loom.step.completed")).toBe(false);
      await app.resume("gate-1");
      expect(await app.result("gate-1")).toEqual({ text: "offline", worked: "worked on offline" });
      expect(worked).toEqual(["offline"]);
    } finally {
      await app.close();
      await stores.close();
    }
    const stopAfter = await cli(["stop", "gate-1", "--dir", dir, "--logic", "spec/cli/operateMachines.ts"]);
    expect(stopAfter.code).toBe(1);
    expect(stopAfter.stderr).toContain('execution "gate-1" already ended (done)');
  });

  it("stop --logic journals the stop", async () => {
    const dir = await tempDir("offline-stop");
    let stores = await fsStores({ dir });
    const app = createApp(defineConfig({ stores, effects: { work: createToolEffect(async () => "w") } }));
    await app.start(gate, { executionId: "gate-1", input: {} });
    await app.close();
    await stores.close();
    const stopped = await cli(["stop", "gate-1", "--dir", dir, "--logic", "spec/cli/operateMachines.ts"]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toContain("stopped gate-1 in the journal (no app held it");
    stores = await fsStores({ dir, readOnly: true });
    expect((await stores.events.read("gate-1")).at(-1)).toMatchObject({
      type: "loom.execution.ended",
      status: "stopped",
      error: { message: "stopped by loomwork stop" },
    });
    await stores.close();
  });
});

describe("--help", () => {
  it("every operating command documents its arguments and routes", async () => {
    for (const name of ["follow", "send", "approve", "deny", "stop", "resume"]) {
      const { code, stdout } = await cli([name, "--help"]);
      expect(code).toBe(0);
      expect(stdout).toContain(`Usage: loomwork ${name} <executionId>`);
      expect(stdout).toMatch(name === "follow" ? /control socket/ : /serveControl/);
    }
  });
});

describe("the app that served the control socket is killed (SIGKILL)", () => {
  it("its dead socket and lock are no app: the CLI journals the command itself with --logic", async () => {
    const dir = await tempDir("killed");
    const child = spawn(process.execPath, ["--import", "tsx", "spec/cli/controlledApp.ts"], {
      env: { ...process.env, LOOMWORK_DIR: dir },
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => chunk.includes("ready") && resolve());
      child.once("exit", (code) => reject(new Error(`the app exited (${code}) before it was ready`)));
    });
    const viaApp = await cli(["send", "gate-1", '{"type":"GO","text":"live"}', "--dir", dir, "--json"]);
    expect(viaApp.code, viaApp.stderr).toBe(0);
    expect(JSON.parse(viaApp.stdout)).toMatchObject({ via: "app" });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    expect(await readdir(dir)).toContain("loomwork.sock"); // left behind by the killed app
    const offline = await cli([
      "send",
      "gate-2",
      '{"type":"GO","text":"after the crash"}',
      "--dir",
      dir,
      "--logic",
      "spec/cli/operateMachines.ts",
      "--json",
    ]);
    expect(offline.stderr).toBe("");
    expect(offline.code).toBe(0);
    expect(JSON.parse(offline.stdout)).toMatchObject({ via: "journal", value: "working" });
    const stores = await fsStores({ dir, readOnly: true });
    try {
      // The app journaled the event before the CLI was told so (what its step did next may have died with it).
      expect((await stores.events.read("gate-1")).filter((r) => r.type === "loom.event.received")).toMatchObject([
        { event: { text: "live" } },
      ]);
      expect((await stores.events.read("gate-2")).filter((r) => r.type === "loom.event.received")).toMatchObject([
        { event: { text: "after the crash" } },
      ]);
    } finally {
      await stores.close();
    }
  });
});
