// @vitest-environment happy-dom
// loomwork/react with React 19 in a DOM (happy-dom): components re-render as a journaled execution moves,
// the snapshot is typed from its logic, and stopped or failed executions render without React's
// "getSnapshot should be cached" error or an update loop.
import { act, createElement, type ReactNode } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import {
  useExecution,
  useExecutions,
  useExecutionSelector,
  useExecutionTree,
  useExecutionStream,
  useExecutionView,
  usePendingApprovals,
} from "../../adapters/react/index.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { agentLoop$, createLlmEffect, createToolEffect } from "../../index.js";
import { byTurn, startOpenAiServer } from "../support/openaiServer.js";
import { PROVIDERS } from "../support/providers.js";
import { createApp, defineConfig, memoryStores, type JournaledActor } from "../../index.js";
import { demoMachine, failingBoom, fragileMachine } from "../support/demoMachine.js";
import { countedDemoEffects } from "../support/harness.js";
import { createReadModels } from "../../readModels.js";
import { parent } from "../children/machines.js";

declare global {
  var IS_REACT_ACT_ENVIRONMENT: boolean;
}
globalThis.IS_REACT_ACT_ENVIRONMENT = true;

let container: HTMLElement;
let root: Root;
let errors: ReturnType<typeof vi.spyOn>;

beforeEach(() => {
  container = document.createElement("div");
  document.body.append(container);
  root = createRoot(container);
  errors = vi.spyOn(console, "error");
});

afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
  errors.mockRestore();
});

const render = (node: ReactNode) => act(async () => root.render(node));
// Lets the runtime's promises settle inside act, so React sees every update it causes.
const settle = (work: () => Promise<unknown>) => act(async () => void (await work()));

function Status({ actor }: { actor: JournaledActor<typeof demoMachine> }) {
  const snapshot = useExecution(actor);
  return createElement(
    "p",
    { id: "status" },
    `${snapshot.status} ${JSON.stringify(snapshot.value)} notes=${snapshot.context.notes.length}`,
  );
}

function Notes({ actor }: { actor: JournaledActor<typeof demoMachine> }) {
  const renders = (Notes as unknown as { renders: number }).renders++;
  const count = useExecutionSelector(actor, (s) => s.context.notes.length);
  return createElement("p", { id: "notes", "data-renders": renders }, String(count));
}
(Notes as unknown as { renders: number }).renders = 0;

const text = (id: string) => container.querySelector(`#${id}`)?.textContent;

describe("loomwork/react", () => {
  it("useExecution renders each state of a journaled execution, to its end", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: countedDemoEffects().effects }));
    const actor = await app.start(demoMachine, { executionId: "r", input: { topic: "owls" } });
    await render(createElement(Status, { actor }));
    await settle(() => actor.settled());
    expect(text("status")).toBe('active "waiting" notes=1');
    await settle(async () => {
      await actor.sendAsync({ type: "APPROVE" });
      await app.result("r");
    });
    expect(text("status")).toBe('done "done" notes=2');
    expect(errors).not.toHaveBeenCalled();
    await app.close();
  });

  it("renders stopped and failed executions without a getSnapshot warning or an update loop", async () => {
    const app = createApp(
      defineConfig({ stores: memoryStores(), effects: { ...countedDemoEffects().effects, ...failingBoom } }),
    );
    const stopped = await app.start(demoMachine, { executionId: "s", input: { topic: "t" } });
    await stopped.settled();
    await app.stop("s", "user cancelled");
    const failed = await app.start(fragileMachine, { executionId: "f" });
    await app.result("f").catch(() => undefined);
    function Both() {
      const a = useExecution(stopped);
      const b = useExecution(failed);
      return createElement("p", { id: "both" }, `${a.status} ${b.status}`);
    }
    await render(createElement(Both));
    expect(text("both")).toBe("stopped error");
    expect(errors).not.toHaveBeenCalled();
    await app.close();
  });

  it("useExecutionSelector re-renders only when the selected value changes", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: countedDemoEffects().effects }));
    const actor = await app.start(demoMachine, { executionId: "n", input: { topic: "t" } });
    await settle(() => actor.settled());
    (Notes as unknown as { renders: number }).renders = 0;
    await render(createElement(Notes, { actor }));
    expect(text("notes")).toBe("1");
    const rendersBefore = (Notes as unknown as { renders: number }).renders;
    // APPROVE changes the state (waiting -> writing) but not the count until the write step completes.
    await settle(async () => {
      await actor.sendAsync({ type: "APPROVE" });
      await app.result("n");
    });
    expect(text("notes")).toBe("2");
    expect((Notes as unknown as { renders: number }).renders - rendersBefore).toBe(1);
    await app.close();
  });

  it("useExecutionTree follows a tree of child executions, linked to their parent", async () => {
    const app = createApp(
      defineConfig({ stores: memoryStores(), effects: { double: createToolEffect(async (n: number) => n * 2) } }),
    );
    const models = createReadModels(app);
    function Tree() {
      const tree = useExecutionTree(models, "t");
      return createElement(
        "p",
        { id: "tree" },
        tree.map((e) => `${e.executionId}<${e.parentId ?? "-"}:${e.status}`).join(","),
      );
    }
    await render(createElement(Tree));
    await settle(() => models.ready);
    expect(text("tree")).toBe("");
    await settle(async () => {
      await app.start(parent, { executionId: "t" });
      await app.result("t");
    });
    expect(text("tree")).toBe("t<-:done,t/w<t:done");
    expect(models.tree("t/w").map((e) => e.executionId)).toEqual(["t/w"]);
    // A fresh read model over the same stores gets the links from the catalogue.
    const fresh = createReadModels(app);
    await fresh.ready;
    expect(fresh.tree("t").map((e) => [e.executionId, e.parentId, e.rootId])).toEqual([
      ["t", undefined, undefined],
      ["t/w", "t", "t"],
    ]);
    fresh.dispose();
    models.dispose();
    await app.close();
  });

  it("useExecutions and useExecutionView follow the app's read models", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: countedDemoEffects().effects }));
    const models = createReadModels(app);
    function List() {
      const executions = useExecutions(models);
      const one = useExecutionView(models, "b");
      return createElement(
        "p",
        { id: "list" },
        `${executions.map((e) => `${e.executionId}:${e.status}`).join(",")} b=${one?.status ?? "-"}`,
      );
    }
    await render(createElement(List));
    await settle(() => models.ready);
    expect(text("list")).toBe(" b=-");
    await settle(async () => {
      for (const id of ["b", "a"])
        await (await app.start(demoMachine, { executionId: id, input: { topic: id } })).settled();
    });
    expect(text("list")).toBe("a:running,b:running b=running");
    await settle(() => app.stop("b"));
    expect(text("list")).toBe("a:running,b:stopped b=stopped");
    expect(errors).not.toHaveBeenCalled();
    await app.close();
  });

  it("types the snapshot from the actor's logic", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: countedDemoEffects().effects }));
    const actor = await app.start(demoMachine, { executionId: "t", input: { topic: "t" } });
    expectTypeOf(actor).toEqualTypeOf<JournaledActor<typeof demoMachine>>();
    expectTypeOf(actor.getSnapshot().context).toEqualTypeOf<{ topic: string; notes: string[]; approved: boolean }>();
    function Typed() {
      const snapshot = useExecution(actor);
      expectTypeOf(snapshot.context.notes).toEqualTypeOf<string[]>();
      // @ts-expect-error a misspelt context field does not type-check
      void snapshot.context.nots;
      return null;
    }
    await render(createElement(Typed));
    await app.close();
  });

  it("useExecutionStream drops a retried attempt's text: a retry voids its step's deltas since its last start-step", async () => {
    const parts = [
      { index: 0, stepId: "a#model:1", type: "start-step" },
      { index: 1, stepId: "a#model:1", type: "text-delta", delta: "Partial answer that " },
      { index: 2, stepId: "a#model:1", type: "text-delta", delta: "will be void" },
      { index: 3, stepId: "a#model:1", type: "retry" },
      { index: 4, stepId: "a#model:1", type: "start-step" },
      { index: 5, stepId: "a#model:1", type: "text-delta", delta: "The answer." },
      { index: 6, stepId: "a#model:2", type: "start-step" },
      { index: 7, stepId: "a#model:2", type: "text-delta", delta: " And more." },
    ];
    const app = {
      stream: () =>
        (async function* () {
          for (const part of parts) yield part;
        })() as never,
    };
    function Streamed() {
      const { text: shown } = useExecutionStream(app, "r-1");
      return createElement("p", { id: "streamed" }, shown);
    }
    await render(createElement(Streamed));
    await settle(() => new Promise((r) => setTimeout(r, 20)));
    expect(text("streamed")).toBe("The answer. And more.");
  });

  it("useExecutionStream shows a streamed turn as it comes, and usePendingApprovals the parked calls", async () => {
    const server = await startOpenAiServer(
      byTurn([
        { toolCalls: [{ id: "call_rm", name: "deleteFile", arguments: '{"path":"/etc/hosts"}' }] },
        { text: "Deleted the file as you approved.", chunkChars: 5 },
      ]),
    );
    try {
      const app = createApp(
        defineConfig({
          stores: memoryStores(),
          effects: {
            model: createLlmEffect(fromAiSdk(PROVIDERS[2]!.model(server.baseURL))),
            deleteFile: createToolEffect(async ({ path }: { path: string }) => ({ deleted: path }), {
              needsApproval: true,
            }),
          },
        }),
      );
      const models = createReadModels(app);
      function Chat() {
        const { text } = useExecutionStream(app, "ops-1");
        const approvals = usePendingApprovals(models, "ops-1");
        return createElement(
          "p",
          { id: "chat" },
          `${approvals.map((a) => `${a.toolName}:${a.toolCallId}`).join(",")} | ${text}`,
        );
      }
      await render(createElement(Chat));
      let actor!: JournaledActor;
      await settle(async () => {
        actor = await app.start(agentLoop$({ id: "ops", model: "model", tools: ["deleteFile"] }), {
          executionId: "ops-1",
          input: { prompt: "clean up" },
        });
        for (let i = 0; i < 500 && actor.getSnapshot().value !== "awaitingApproval"; i++)
          await new Promise((r) => setTimeout(r, 5));
        await models.ready;
      });
      expect(text("chat")).toBe("deleteFile:call_rm | ");
      await settle(async () => {
        await actor.sendAsync({ type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: true });
        await app.result("ops-1");
        await new Promise((r) => setTimeout(r, 20));
      });
      expect(text("chat")).toBe(" | Deleted the file as you approved.");
      await settle(() => app.close());
      expect(errors).not.toHaveBeenCalled();
    } finally {
      await server.close();
    }
  });
});
