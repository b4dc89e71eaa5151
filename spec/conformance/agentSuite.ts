// The agent loop on every adapter: model -> tools -> model with its step ids and requests, a failing
// tool's error as the model's input, and an ended run read back by a fresh app over reopened stores
// without re-running anything.
import { describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import type { ModelRequest } from "../../machines/helpers/messages.js";
import { STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { Stores } from "../../stores/types.js";
import { withStores, type AdapterHarness } from "../support/adapterHarness.js";

const loop = agentLoop$({
  id: "researcher",
  model: "model",
  tools: ["search", "lookup"],
  system: "Be brief.",
  warnTranscriptBytes: false,
});

function agentApp(stores: Stores, calls: string[], requests: ModelRequest[] = []) {
  const model = scriptedModel((request, call) => {
    requests.push(structuredClone(request));
    return call === 0
      ? {
          toolCalls: [
            { toolName: "search", input: { q: "owls" } },
            { toolName: "lookup", input: { id: 7 } },
          ],
        }
      : { text: "Owls hunt at night." };
  });
  const counted = <I, O>(name: string, run: (input: I) => Promise<O>) =>
    createToolEffect(async (input: I) => (calls.push(name), run(input)));
  return createApp(
    defineConfig({
      stores,
      logics: [loop],
      effects: {
        model: createLlmEffect(model),
        search: counted("search", async ({ q }: { q: string }) => [`${q} hit`]),
        lookup: counted("lookup", async ({ id }: { id: number }): Promise<never> => {
          throw new Error(`no record ${id}`);
        }),
      },
    }),
  );
}

export function describeAgentSuite(name: string, harness: AdapterHarness): void {
  describe(`the agent loop on ${name}`, () => {
    it(
      "runs model -> tools -> model with step ids <loop>#turn:<i>:model|tool:<j>; a failing tool's error is the model's next input",
      withStores(harness, async ({ stores }) => {
        const calls: string[] = [];
        const requests: ModelRequest[] = [];
        const app = agentApp(stores, calls, requests);
        await app.start(loop, { executionId: "r", input: { prompt: "Tell me about owls" } });
        expect(await app.result("r")).toMatchObject({ text: "Owls hunt at night.", turns: 2 });
        // A failed tool's outcome is recorded too (STEP_FAILED): every step has exactly one outcome.
        const steps = (await app.log("r"))
          .filter((r) => r.type === STEP_COMPLETED || r.type === STEP_FAILED)
          .map((r) => r.stepId);
        expect(steps).toHaveLength(4);
        expect(new Set(steps)).toEqual(
          new Set([
            "researcher#turn:0:model",
            "researcher#turn:0:tool:0",
            "researcher#turn:0:tool:1",
            "researcher#turn:1:model",
          ]),
        );
        expect(calls.sort()).toEqual(["lookup", "search"]);
        const tools = requests[1]!.messages.filter((m) => m.role === "tool");
        expect(tools[0]).toMatchObject({ toolName: "search", content: ["owls hit"] });
        expect(JSON.stringify(tools[1])).toContain("no record 7");
        await app.close();
      }),
    );

    it(
      "an ended run is read back by a fresh app over the reopened stores: same output, same journal, nothing re-run",
      withStores(harness, async (opened) => {
        const first = agentApp(opened.stores, []);
        await first.start(loop, { executionId: "r", input: { prompt: "Tell me about owls" } });
        const output = await first.result("r");
        const log = await first.log("r");
        await first.close();
        const calls: string[] = [];
        const requests: ModelRequest[] = [];
        const second = agentApp(await opened.reopen(), calls, requests);
        expect(await second.result("r")).toEqual(output);
        expect(await second.log("r")).toEqual(log);
        expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
        // Starting the same id again is idempotent: nothing runs, nothing is appended.
        await second.start(loop, { executionId: "r", input: { prompt: "Tell me about owls" } }).catch(() => undefined);
        expect(await second.log("r")).toEqual(log);
        expect(calls).toEqual([]);
        expect(requests).toEqual([]);
        await second.close();
      }),
    );
  });
}
