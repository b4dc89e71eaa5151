// Machines the operating-command tests run, in a module of their own so the CLI can load them with --logic.
import { assign, setup } from "xstate";
import { effectActor } from "../../machines/helpers/effectActor.js";

/** Waits for GO { text }, then runs its one step `work` and ends with the text and the step's output. */
export const gate = setup({
  types: {} as {
    context: { text: string; worked: string };
    events: { type: "GO"; text: string };
    output: { text: string; worked: string };
  },
  actors: { work: effectActor<{ text: string }, string>() },
}).createMachine({
  id: "gate",
  context: { text: "", worked: "" },
  initial: "waiting",
  states: {
    waiting: { on: { GO: { target: "working", actions: assign({ text: ({ event }) => event.text }) } } },
    working: {
      invoke: {
        src: "work",
        id: "work",
        input: ({ context }) => ({ text: context.text }),
        onDone: { target: "done", actions: assign({ worked: ({ event }) => event.output }) },
      },
    },
    done: { type: "final" },
  },
  output: ({ context }) => context,
});
