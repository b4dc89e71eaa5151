// `loomwork approvals`: the calls parked for a human, read from the journal beside the running app.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fsStores, type FsStores } from "../../adapters/fs/index.js";
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  scriptedModel,
  type App,
  type JournaledActor,
} from "../../index.js";
import { cli } from "./support.js";

let dir: string;
let stores: FsStores;
let app: App;
let actor: JournaledActor;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "loomwork-cli-approvals-"));
  stores = await fsStores({ dir });
  app = createApp(
    defineConfig({
      stores,
      effects: {
        model: createLlmEffect(
          scriptedModel([
            { toolCalls: [{ toolName: "deleteFile", input: { path: "/etc/hosts" } }] },
            { text: "Done." },
          ]),
        ),
        deleteFile: createToolEffect(async ({ path }: { path: string }) => ({ deleted: path }), {
          needsApproval: true,
        }),
      },
    }),
  );
  actor = await app.start(agentLoop$({ id: "ops", model: "model", tools: ["deleteFile"] }), {
    executionId: "ops-1",
    input: { prompt: "clean up" },
  });
  for (let i = 0; i < 500 && actor.getSnapshot().value !== "awaitingApproval"; i++)
    await new Promise((r) => setTimeout(r, 5));
});

afterAll(async () => {
  await app.close();
  await stores.close();
  await rm(dir, { recursive: true, force: true });
});

describe("loomwork approvals", () => {
  it("lists the parked call while the app runs, and nothing once it is decided", async () => {
    expect(actor.getSnapshot().value).toBe("awaitingApproval");
    const listed = await cli(["approvals", "--dir", dir, "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    const [pending] = JSON.parse(listed.stdout);
    expect(pending).toMatchObject({ executionId: "ops-1", toolName: "deleteFile", input: { path: "/etc/hosts" } });
    const text = await cli(["approvals", "--dir", dir]);
    expect(text.stdout).toMatch(/^ops-1 +\S+ +deleteFile +\{"path":"\/etc\/hosts"\}/m);
    await actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: pending.toolCallId, approved: true });
    await app.result("ops-1");
    expect(JSON.parse((await cli(["approvals", "--dir", dir, "--json"])).stdout)).toEqual([]);
    expect((await cli(["approvals", "--dir", dir])).stdout).toContain("no tool call waits for approval");
  });

  it("says which execution it does not know (3)", async () => {
    const { code, stderr } = await cli(["approvals", "nope", "--dir", dir]);
    expect(code).toBe(3);
    expect(stderr).toContain("nope");
  });
});
