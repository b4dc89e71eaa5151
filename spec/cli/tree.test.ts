// Issue 34: a tree of agents at the CLI. `loomwork approvals` lists a sub-agent's parked call with the agents from
// the lead down to it; `loomwork approve <lead> <call>` through the running app reaches the sub-agent.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fsStores, serveControl, type ControlServer, type FsStores } from "../../adapters/fs/index.js";
import { createApp, defineConfig, type App } from "../../index.js";
import { createReadModels } from "../../readModels.js";
import { lead, treeEffects, until } from "../agents/tree/support.js";
import { cli, spawnCli } from "./support.js";

let dir: string;
let stores: FsStores;
let app: App;
let control: ControlServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "loomwork-cli-tree-"));
  stores = await fsStores({ dir });
  app = createApp(
    defineConfig({ stores, effects: treeEffects({ approveSearch: true, callIds: true }).effects, logics: [lead] }),
  );
  control = await serveControl(app, { dir: stores.dir });
});

afterAll(async () => {
  await control.close();
  await app.close();
  await stores.close();
  await rm(dir, { recursive: true, force: true });
});

describe("a tree of agents at the CLI", () => {
  it("approvals lists a sub-agent's call with its path; approve and deny by the lead's id reach the sub-agent", async () => {
    const models = createReadModels(app);
    await app.start(lead, { executionId: "lead-1", input: { prompt: "owls and bats?" } });
    await until(async () => (await models.ready, models.approvals("lead-1").length === 2), "both sub-agents parked");
    models.dispose();
    const listed = await cli(["approvals", "--dir", dir, "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    const path = (id: string) => [
      { executionId: "lead-1", agent: "lead" },
      { executionId: id, agent: "researcher" },
    ];
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({
        executionId: "lead-1/tool:0:0",
        toolCallId: "call-owls",
        path: path("lead-1/tool:0:0"),
      }),
      expect.objectContaining({
        executionId: "lead-1/tool:0:1",
        toolCallId: "call-bats",
        path: path("lead-1/tool:0:1"),
      }),
    ]);
    // Asked about the lead, its sub-agents' calls; the table shows the agents from the lead down.
    const text = await cli(["approvals", "lead-1", "--dir", dir]);
    expect(text.stdout).toMatch(/^lead-1\/tool:0:0 +call-owls +search +\{"q":"owls"\} +lead > researcher$/m);

    const ok = await cli(["approve", "lead-1", "call-owls", "--dir", dir]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("approved call-owls in lead-1 by the running app");
    const no = await cli(["deny", "lead-1", "call-bats", "--reason", "not bats", "--dir", dir]);
    expect(no.code, no.stderr).toBe(0);
    expect(((await app.result("lead-1")) as { text: string }).text).toContain("owls found");
    expect(JSON.stringify(await app.log("lead-1/tool:0:1"))).toContain("not bats");
  });

  it("follow <lead> shows its sub-agents' live deltas, each under its agent's name", async () => {
    const followDir = await mkdtemp(join(tmpdir(), "loomwork-cli-follow-tree-"));
    const followStores = await fsStores({ dir: followDir });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const following = createApp(
      defineConfig({
        stores: followStores,
        effects: treeEffects({ streaming: true, questions: ["owls"], beforeAnswer: () => gate }).effects,
      }),
    );
    const served = await serveControl(following, { dir: followStores.dir });
    try {
      await following.start(lead, { executionId: "lead-f", input: { prompt: "owls?" } });
      const text = spawnCli(["follow", "lead-f", "--dir", followDir, "--no-color"]);
      const json = spawnCli(["follow", "lead-f", "--dir", followDir, "--json"]);
      await text.waitFor("⋯ researcher lead-f/tool:0:0 turn:1:model owls ");
      await json.waitFor('"delta":"owls "');
      release();
      await text.waitFor("■ ended done");
      expect(await text.exited).toBe(0);
      expect(await json.exited).toBe(0);
      expect(text.stdout).toContain("⋯ researcher lead-f/tool:0:0 turn:1:model owls found");
      const deltas = json.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { delta?: { executionId?: string; agent?: string; delta?: string } })
        .flatMap((line) => (line.delta?.executionId ? [line.delta] : []));
      expect(deltas.filter((d) => d.delta !== undefined)).toEqual([
        expect.objectContaining({ executionId: "lead-f/tool:0:0", agent: "researcher", delta: "owls " }),
        expect.objectContaining({ executionId: "lead-f/tool:0:0", agent: "researcher", delta: "found" }),
      ]);
    } finally {
      release();
      await served.close();
      await following.close();
      await followStores.close();
      await rm(followDir, { recursive: true, force: true });
    }
  });
});
