// A process that runs an agent whose tool needs approval, on fsStores, against the loopback server.
// "start": runs until the loop parks in awaitingApproval, prints "parked <pendingApprovals JSON>", then is
// SIGKILLed by the parent. "approve": resumes in a fresh process, prints what it found, sends TOOL_APPROVAL,
// prints "result <JSON>".
//
// argv[2]: JSON { dir, baseURL, mode: "start" | "approve", toolCallId? }
import { z } from "zod";
import { agentLoop$ } from "../../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../../actors/agents/model.js";
import { createApp } from "../../../actors/app.js";
import { defineConfig } from "../../../actors/config.js";
import { createToolEffect } from "../../../actors/effects/effect.js";
import { fromAiSdk } from "../../../adapters/ai-sdk/index.js";
import { fsStores } from "../../../adapters/fs/index.js";
import { PROVIDERS } from "../../support/providers.js";
import { createReadModels } from "../../../readModels.js";

const options = JSON.parse(process.argv[2]!) as {
  dir: string;
  baseURL: string;
  mode: "start" | "approve";
  toolCallId?: string;
};
const out = (line: string) => process.stdout.write(`${line}\n`);

const app = createApp(
  defineConfig({
    stores: await fsStores({ dir: options.dir }),
    effects: {
      model: createLlmEffect(fromAiSdk(PROVIDERS[1]!.model(options.baseURL))),
      sendEmail: createToolEffect(async ({ to }) => (out(`tool sendEmail ${to}`), { sent: to }), {
        inputSchema: z.object({ to: z.string() }),
        needsApproval: true,
      }),
    },
  }),
);
const loop = agentLoop$({ id: "mail", model: "model", tools: ["sendEmail"] });
const whenParked = (actor: { getSnapshot(): { value: unknown }; subscribe(f: () => void): unknown }) =>
  new Promise<void>((resolve) => {
    const check = () => actor.getSnapshot().value === "awaitingApproval" && resolve();
    actor.subscribe(check);
    check();
  });

if (options.mode === "start") {
  const actor = await app.start(loop, { executionId: "mail-1", input: { prompt: "Email Ada." } });
  await whenParked(actor);
  const models = createReadModels(app);
  await models.ready;
  out(`parked ${JSON.stringify(models.execution("mail-1")!.pendingApprovals)}`);
  await new Promise(() => undefined); // the parent kills this process here
} else {
  const actor = await app.resume("mail-1", loop);
  const models = createReadModels(app);
  await models.ready;
  out(
    `resumed ${JSON.stringify({ state: actor.getSnapshot().value, pending: models.execution("mail-1")!.pendingApprovals })}`,
  );
  await actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: options.toolCallId, approved: true });
  out(`result ${JSON.stringify(await app.result("mail-1"))}`);
  await app.close();
}
