// Human approval: a tool declared with needsApproval parks the loop in `awaitingApproval` (journaled) until a
// TOOL_APPROVAL; the park survives an app restart over the same fs journal; a denial reaches the model as
// the tool's result; pending approvals appear in the read models (createReadModels(app)). A real provider against the loopback server.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { ERROR_CODES } from "../../actors/constants.js";
import { ApprovalNotWaitingError } from "../../actors/agents/approvals.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import type { JournaledActor } from "../../actors/journal/actor.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { fsStores } from "../../adapters/fs/index.js";
import { memoryStores } from "../../stores/memory.js";
import type { Stores } from "../../stores/types.js";
import { byTurn, startOpenAiServer, type OpenAiServer } from "../support/openaiServer.js";
import { PROVIDERS } from "../support/providers.js";
import { createReadModels } from "../../readModels.js";

let server: OpenAiServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

function agent(stores: Stores, baseURL: string, deleted: string[], listed: string[] = []) {
  const app = createApp(
    defineConfig({
      stores,
      effects: {
        model: createLlmEffect(fromAiSdk(PROVIDERS[2]!.model(baseURL))),
        deleteFile: createToolEffect(async ({ path }) => (deleted.push(path), { deleted: path }), {
          description: "Deletes a file",
          inputSchema: z.object({ path: z.string() }),
          // Only files outside /tmp need a human.
          needsApproval: ({ path }) => !path.startsWith("/tmp/"),
        }),
        listFiles: createToolEffect(async () => (listed.push("ls"), ["a", "b"]), { needsApproval: false }),
      },
    }),
  );
  return { app, loop: agentLoop$({ id: "ops", model: "model", tools: ["deleteFile", "listFiles"] }) };
}

async function parked(actor: JournaledActor): Promise<void> {
  for (let i = 0; i < 1000 && actor.getSnapshot().value !== "awaitingApproval"; i++)
    await new Promise((r) => setTimeout(r, 2));
  expect(actor.getSnapshot().value).toBe("awaitingApproval");
}

const TURNS = [
  {
    toolCalls: [
      { id: "call_rm", name: "deleteFile", arguments: '{"path":"/etc/hosts"}' },
      { id: "call_tmp", name: "deleteFile", arguments: '{"path":"/tmp/x"}' },
      { id: "call_ls", name: "listFiles", arguments: "{}" },
    ],
  },
  { text: "Done." },
];

describe("needsApproval", () => {
  it("parks, survives an app restart over the fs journal, is approved, and finishes", async () => {
    server = await startOpenAiServer(byTurn(TURNS));
    const dir = await mkdtemp(join(tmpdir(), "loomwork-approval-"));
    dirs.push(dir);
    const deleted: string[] = [];
    const listed: string[] = [];
    const firstStores = await fsStores({ dir });
    const first = agent(firstStores, server.baseURL, deleted, listed);
    const actor = await first.app.start(first.loop, { executionId: "ops", input: { prompt: "Clean up." } });
    await parked(actor);
    // The calls that need no approval ran; the one that does waits.
    expect(deleted).toEqual(["/tmp/x"]);
    expect(listed).toEqual(["ls"]);
    expect(actor.getSnapshot().context.awaiting).toEqual(["call_rm"]);
    const firstModels = createReadModels(first.app);
    await firstModels.ready;
    expect(firstModels.execution("ops")!.pendingApprovals).toEqual([
      { toolCallId: "call_rm", toolName: "deleteFile", input: { path: "/etc/hosts" }, stepId: "ops#turn:0:model" },
    ]);
    await first.app.close();
    await firstStores.close();

    const secondStores = await fsStores({ dir });
    const second = agent(secondStores, server.baseURL, deleted, listed);
    const secondModels = createReadModels(second.app);
    await secondModels.ready;
    expect(secondModels.execution("ops")!.pendingApprovals.map((a) => a.toolCallId)).toEqual(["call_rm"]);
    const resumed = await second.app.resume("ops", second.loop);
    expect(resumed.getSnapshot().value).toBe("awaitingApproval");
    await resumed.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: true });
    expect(await second.app.result("ops")).toMatchObject({ text: "Done.", turns: 2 });
    expect(deleted).toEqual(["/tmp/x", "/etc/hosts"]);
    expect(listed).toEqual(["ls"]);
    expect(server.requests.map((r) => r.turn)).toEqual([0, 1]);
    expect(secondModels.execution("ops")!.pendingApprovals).toEqual([]);
    const log = await second.app.log("ops");
    const completed = log.filter((r) => r.type === "loom.step.completed").map((r) => r.stepId);
    expect(completed.filter((id) => id === "ops#turn:0:tool:0")).toHaveLength(1);
    expect(log.some((r) => r.type === "loom.event.received" && r.event.type === "TOOL_APPROVAL")).toBe(true);
    await second.app.close();
    await secondStores.close();
  });

  it("a denial reaches the model as the tool's result, with its reason; the tool never runs", async () => {
    server = await startOpenAiServer(byTurn(TURNS));
    const deleted: string[] = [];
    const { app, loop } = agent(memoryStores(), server.baseURL, deleted);
    const actor = await app.start(loop, { executionId: "ops", input: { prompt: "Clean up." } });
    await parked(actor);
    await actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: false, reason: "hosts is needed" });
    expect(await app.result("ops")).toMatchObject({ text: "Done." });
    expect(deleted).toEqual(["/tmp/x"]);
    const tools = server.requests[1]!.body.messages.filter((m) => m.role === "tool");
    expect(tools.map((m) => m.tool_call_id)).toEqual(["call_rm", "call_tmp", "call_ls"]);
    expect(String(tools[0]!.content)).toMatch(/A human denied this call to "deleteFile": hosts is needed/);
    await app.close();
  });

  it("refuses a decision on a call that is not parked, journaling nothing", async () => {
    server = await startOpenAiServer(byTurn(TURNS));
    const { app, loop } = agent(memoryStores(), server.baseURL, []);
    const actor = await app.start(loop, { executionId: "ops", input: { prompt: "Clean up." } });
    await parked(actor);
    // call_tmp needed no approval (it ran); "nope" was never asked.
    await expect(
      actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call_tmp", approved: false }),
    ).rejects.toBeInstanceOf(ApprovalNotWaitingError);
    await expect(actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "nope", approved: true })).rejects.toMatchObject({
      code: ERROR_CODES.approvalNotWaiting,
      waiting: ["call_rm"],
    });
    expect(actor.getSnapshot().value).toBe("awaitingApproval");
    expect(actor.getSnapshot().context.awaiting).toEqual(["call_rm"]);
    expect((await app.log("ops")).filter((r) => r.type === "loom.event.received")).toEqual([]);
    await app.stop("ops");
    await app.close();
  });
});
