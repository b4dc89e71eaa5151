// A machine with two effects, a timer and an external event: the kernel's test subject.
import { assign, setup } from "xstate";
import { createToolEffect } from "../../actors/effects/effect.js";
import { effectActor } from "../../machines/helpers/effectActor.js";

export const demoMachine = setup({
  types: {} as {
    context: { topic: string; notes: string[]; approved: boolean };
    input: { topic: string };
    events: { type: "APPROVE" } | { type: "REJECT" };
    output: { notes: string[]; approved: boolean };
  },
  actors: {
    research: effectActor<{ topic: string }, string>(),
    write: effectActor<{ notes: string[] }, string>(),
  },
}).createMachine({
  id: "demo",
  context: ({ input }) => ({ topic: input.topic, notes: [], approved: false }),
  initial: "researching",
  states: {
    researching: {
      invoke: {
        src: "research",
        id: "research",
        input: ({ context }) => ({ topic: context.topic }),
        onDone: {
          target: "waiting",
          actions: assign({ notes: ({ context, event }) => [...context.notes, event.output] }),
        },
      },
    },
    waiting: {
      on: { APPROVE: { target: "writing", actions: assign({ approved: true }) }, REJECT: "writing" },
      after: { 1000: { target: "writing" } },
    },
    writing: {
      invoke: {
        src: "write",
        id: "write",
        input: ({ context }) => ({ notes: context.notes }),
        onDone: {
          target: "done",
          actions: assign({ notes: ({ context, event }) => [...context.notes, event.output] }),
        },
        onError: { target: "done", actions: assign({ notes: ({ context }) => [...context.notes, "write failed"] }) },
      },
    },
    done: { type: "final" },
  },
  output: ({ context }) => ({ notes: context.notes, approved: context.approved }),
});

/** A machine whose one step, `boom`, the machine does not handle: with `failingBoom`, the execution ends as error. */
export const fragileMachine = setup({ actors: { boom: effectActor() } }).createMachine({
  id: "fragile",
  initial: "a",
  states: { a: { invoke: { src: "boom", id: "boom", onDone: "b" } }, b: { type: "final" } },
});

/** The `boom` effect of `fragileMachine`: it always throws TypeError("nope"). */
export const failingBoom = {
  boom: createToolEffect(async () => {
    throw new TypeError("nope");
  }),
};
