// The real-model half of the browser harness page: an agent on IndexedDB whose model is the real
// `@ai-sdk/openai-compatible` 3.x provider (LanguageModel v4) calling the test's loopback server, its
// stream parts collected as they arrive, and approve / deny buttons for its pending approvals.
import { createOpenAICompatible } from "ai-sdk-openai-compatible-v3";
import { z } from "zod";
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  fromAiSdk,
  type App,
  type JournaledActor,
  type StreamPart,
} from "../../../index.js";
import type { IndexedDbStores } from "../../../adapters/indexeddb/index.js";
import { createReadModels } from "../../../readModels.js";

/** Serialisable options of one run. */
export interface RealModelRun {
  db: string;
  baseURL: string;
  executionId: string;
}

type Settle = <T>(
  work: Promise<T> | (() => Promise<T>),
) => Promise<{ ok: true; value: T } | { ok: false; error: { name: string; message: string } }>;

export const REAL_LOOP = agentLoop$({ id: "browser", model: "model", tools: ["search", "sendEmail"] });

export function createRealModelDriver(storesOf: (name: string) => Promise<IndexedDbStores>, settle: Settle) {
  const apps = new Map<string, App>();
  const actors = new Map<string, JournaledActor>();
  const parts: StreamPart[] = [];
  const toolRuns: string[] = [];

  async function appOf(run: RealModelRun): Promise<App> {
    let app = apps.get(run.db);
    if (!app) {
      const provider = createOpenAICompatible({ name: "loopback", baseURL: run.baseURL, includeUsage: true });
      app = createApp(
        defineConfig({
          stores: await storesOf(run.db),
          logics: [REAL_LOOP],
          effects: {
            model: createLlmEffect(fromAiSdk(provider.chatModel("test-model"))),
            search: createToolEffect(async ({ q }) => (toolRuns.push("search"), { hits: [`${q}: by sound`] }), {
              inputSchema: z.object({ q: z.string() }),
            }),
            sendEmail: createToolEffect(async ({ to }) => (toolRuns.push("sendEmail"), { sent: to }), {
              inputSchema: z.object({ to: z.string() }),
              needsApproval: true,
            }),
          },
        }),
      );
      apps.set(run.db, app);
    }
    return app;
  }

  // Each execution's iteration of app.stream, which ends once the execution has ended and every part was delivered.
  const following = new Map<string, Promise<void>>();

  function follow(app: App, executionId: string): void {
    const iteration = (async () => {
      for await (const part of app.stream(executionId)) parts.push(part);
    })();
    iteration.catch(() => undefined);
    following.set(executionId, iteration);
  }

  return {
    start: (run: RealModelRun) =>
      settle(async () => {
        const app = await appOf(run);
        actors.set(
          run.executionId,
          await app.start(REAL_LOOP, {
            executionId: run.executionId,
            input: { prompt: "How do barn owls hunt? Then email Ada." },
          }),
        );
        follow(app, run.executionId); // once it exists (an id with no execution is refused); what streamed before waits for the read
        return null;
      }),
    resume: (run: RealModelRun) =>
      settle(async () => {
        const app = await appOf(run);
        follow(app, run.executionId); // opened before the resume: the recorded turns from the journal, then live
        actors.set(run.executionId, await app.resume(run.executionId, REAL_LOOP));
        return null;
      }),
    result: (run: RealModelRun) => settle(async () => (await appOf(run)).result(run.executionId)),
    state: (executionId: string) => String(actors.get(executionId)?.getSnapshot().value ?? ""),
    parts: () => parts.map((p) => ({ ...p })),
    /** Resolves once the stream this page opened last for the run has delivered its last part (after the run ended). */
    streamed: (run: RealModelRun) => settle(async () => (await following.get(run.executionId), null)),
    toolRuns: () => [...toolRuns],
    /** Renders an approve and a deny button per pending approval, from the read models (createReadModels(app)). */
    renderApprovals: (run: RealModelRun) =>
      settle(async () => {
        const models = createReadModels(await appOf(run));
        await models.ready;
        const pending = models.execution(run.executionId)?.pendingApprovals ?? [];
        models.dispose();
        const list = document.createElement("ul");
        list.id = "approvals";
        for (const approval of pending) {
          const item = document.createElement("li");
          item.textContent = `${approval.toolName}(${JSON.stringify(approval.input)}) `;
          for (const approved of [true, false]) {
            const button = document.createElement("button");
            button.textContent = approved ? "Approve" : "Deny";
            button.dataset[approved ? "approve" : "deny"] = approval.toolCallId;
            button.addEventListener(
              "click",
              () =>
                void actors
                  .get(run.executionId)
                  ?.sendAsync({ type: "TOOL_APPROVAL", toolCallId: approval.toolCallId, approved }),
            );
            item.append(button);
          }
          list.append(item);
        }
        document.getElementById("approvals")?.remove();
        document.body.append(list);
        return pending.map((a) => a.toolCallId);
      }),
  };
}
