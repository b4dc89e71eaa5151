// The 10-step workflow the fleet benchmark runs (the shape DBOS publishes its figures for): ten task
// steps in sequence, each an effect returning a small value.
import { setup, type AnyStateMachine } from "xstate";
import { createTaskEffect, type Effect } from "../actors/effects/effect.js";
import { effectActor } from "../machines/helpers/effectActor.js";

export const FLOW_STEPS = 10;

const states: Record<string, object> = {};
for (let i = 0; i < FLOW_STEPS; i++) {
  states[`s${i}`] = {
    invoke: {
      src: "step",
      id: `step${i}`,
      input: { i },
      onDone: { target: i + 1 < FLOW_STEPS ? `s${i + 1}` : "done" },
    },
  };
}
states.done = { type: "final" };

export const tenStepFlow: AnyStateMachine = setup({
  actors: { step: effectActor<{ i: number }, { i: number }>() },
}).createMachine({
  id: "ten-step-flow",
  initial: "s0",
  states,
  output: () => ({ steps: FLOW_STEPS }),
} as never) as unknown as AnyStateMachine;

export const flowEffects: Record<string, Effect> = {
  step: createTaskEffect(async (input: { i: number }) => ({ i: input.i, ok: true })),
};
