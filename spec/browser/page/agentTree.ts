// The agents-that-delegate half of the browser harness page (issue 34): the tree of spec/support/agentTree.ts (an
// orchestrator, two researchers by agentTool, a writer by handoff) in the tab on indexedDbStores, every model call
// through the real `@ai-sdk/openai-compatible` 3.x provider to the test's loopback server. Each model and tool run is
// listed in localStorage as it starts (it survives a reload); one question's search can be held open.
import { createOpenAICompatible } from "ai-sdk-openai-compatible-v3";
import { createApp, createLlmEffect, createToolEffect, defineConfig, fromAiSdk, type App } from "../../../index.js";
import type { EffectContext } from "../../../actors/effects/effect.js";
import type { IndexedDbStores } from "../../../adapters/indexeddb/index.js";
import { STEP_COMPLETED } from "../../../stores/schema.js";
import { finding, orchestrator, searchInput } from "../../support/agentTree.js";

type Settle = <T>(work: () => Promise<T>) => Promise<unknown>;

const runsKey = (db: string) => `loomwork-agent-tree-runs:${db}`;
const runsOf = (db: string): string[] => JSON.parse(localStorage.getItem(runsKey(db)) ?? "[]") as string[];

/** `window.loom.agentTree`: drives a tree of agents on IndexedDB from page.evaluate. */
export function createAgentTreeDriver(storesOf: (db: string) => Promise<IndexedDbStores>, settle: Settle) {
  const apps = new Map<string, App>();
  let held: string | undefined;
  let holding = false;

  async function appFor(db: string, baseURL: string): Promise<App> {
    let app = apps.get(db);
    if (!app) {
      const ran = (ctx: EffectContext) =>
        localStorage.setItem(runsKey(db), JSON.stringify([...runsOf(db), `${ctx.executionId} ${ctx.stepId}`]));
      const provider = createOpenAICompatible({ name: "loopback", baseURL, includeUsage: true });
      const model = createLlmEffect(fromAiSdk(provider.chatModel("test-model")));
      app = createApp(
        defineConfig({
          stores: await storesOf(db),
          logics: [orchestrator],
          effects: {
            model: { ...model, run: (request, ctx) => (ran(ctx), model.run(request, ctx)) },
            search: createToolEffect(
              async ({ q }, ctx) => {
                ran(ctx);
                if (q === held) {
                  holding = true;
                  await new Promise<never>(() => undefined); // held until the tab goes away
                }
                return { hits: [finding(q)] };
              },
              { inputSchema: searchInput },
            ),
          },
        }),
      );
      apps.set(db, app);
    }
    return app;
  }

  return {
    /** Holds the search of `question` open (the tab is then reloaded with that tool call in flight). */
    hold(question: string): void {
      held = question;
    },
    holding: (): boolean => holding,
    start: (db: string, baseURL: string) =>
      settle(async () => {
        const app = await appFor(db, baseURL);
        await app.start(orchestrator, { executionId: "tree", input: { prompt: "How do owls and bats hunt?" } });
        return null;
      }),
    /** resumeUnfinished in this page's app: the ids it resumed. */
    resumeAll: (db: string, baseURL: string) =>
      settle(async () => (await (await appFor(db, baseURL)).resumeUnfinished()).resumed.map((a) => a.executionId)),
    result: (db: string, baseURL: string) => settle(async () => (await appFor(db, baseURL)).result("tree")),
    /** Every step with an outcome in the database, as "<execution> <step>". */
    recorded: (db: string) =>
      settle(async () => {
        const stores = await storesOf(db);
        const steps: string[] = [];
        for (const info of await stores.events.listExecutions())
          for (const record of await stores.events.read(info.executionId))
            if (record.type === STEP_COMPLETED) steps.push(`${info.executionId} ${String(record.stepId)}`);
        return steps;
      }),
    /** Every model and tool run started in this origin for `db`, across reloads. */
    runs: (db: string): string[] => runsOf(db),
  };
}
