// The machine the schedule fleet test's ticks start: one step (the `stamp` effect, run by a worker), then done.
import { fromPromise, setup } from "xstate";

export const stamped = setup({
  actors: { stamp: fromPromise(async ({ input }: { input: unknown }) => ({ stamped: input })) },
}).createMachine({
  id: "stamped",
  initial: "stamping",
  states: {
    stamping: { invoke: { id: "stamp", src: "stamp", input: () => "tick", onDone: "done" } },
    done: { type: "final" },
  },
});
