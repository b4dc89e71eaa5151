// The machines and journals the devtools specs draw: a plain machine with nested and parallel states and a
// timer, an agent whose tool call waits for approval, and the research agent of the stories.
import { assign, setup } from "xstate";
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  scriptedModel,
  type App,
  type EventStore,
} from "../../index.js";

/** A kettle: nested states (heating.warming / heating.boiling), a parallel state (pouring: cup ‖ lid) and a timer. */
export const kettle = setup({
  types: { context: {} as { cups: number }, events: {} as { type: "SWITCH_ON" | "BOILED" | "POUR" | "DONE" } },
  delays: { cool: 60_000 },
}).createMachine({
  id: "kettle",
  context: { cups: 0 },
  initial: "idle",
  states: {
    idle: { on: { SWITCH_ON: "heating" } },
    heating: {
      initial: "warming",
      states: {
        warming: { on: { BOILED: "boiling" } },
        boiling: { after: { cool: "#kettle.idle" } },
      },
      on: { POUR: "pouring" },
    },
    pouring: {
      type: "parallel",
      states: {
        cup: { initial: "filling", states: { filling: { on: { DONE: "full" } }, full: {} } },
        lid: { initial: "open", states: { open: {} } },
      },
      entry: assign({ cups: ({ context }) => context.cups + 1 }),
    },
  },
});

/** An agent that asks to archive a mail, a call a human approves. */
export const tidy = agentLoop$({ id: "tidy", model: "tidyModel", tools: ["archive"], warnTranscriptBytes: false });

export const tidyEffects = () => ({
  tidyModel: createLlmEffect(
    scriptedModel([
      { toolCalls: [{ id: "call_archive", toolName: "archive", input: { name: "billing.eml" } }] },
      { text: "Archived billing.eml." },
    ]),
  ),
  archive: createToolEffect(async ({ name }: { name: string }) => ({ archived: name }), { needsApproval: true }),
});

/** Runs the kettle to `pouring` (a macrostep per event) in `app`. */
export async function runKettle(app: App, executionId: string): Promise<void> {
  const actor = await app.start(kettle, { executionId });
  for (const type of ["SWITCH_ON", "BOILED", "POUR"] as const) await actor.sendAsync({ type });
}

/** An app over `stores` with every machine of the devtools specs. */
export function devtoolsApp(stores: { events: EventStore } & Parameters<typeof defineConfig>[0]["stores"]): App {
  return createApp(defineConfig({ stores, effects: tidyEffects(), logics: [kettle, tidy] }));
}
export { researchAgent } from "../../stories/support/researchAgent.js";
export { parent, worker } from "../children/machines.js";
