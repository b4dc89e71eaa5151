// The machines the children tests share: a parent that invokes a worker machine, with messages both ways. The golden
// journals of schema 4 (spec/upgrades/goldenV4.ts) replay these very machines: an edit that changes what they do
// breaks that replay, as it would a user's journals.
import { assign, fromPromise, sendParent, sendTo, setup, type AnyStateMachine } from "xstate";

/** A child that doubles its input through an effect, tells its parent, waits for a PING, answers PONG, and ends. */
export const worker = setup({
  types: { input: {} as { n: number }, context: {} as { n: number; doubled?: number } },
  actors: { double: fromPromise(async ({ input }: { input: number }) => input * 2) },
}).createMachine({
  id: "worker",
  context: ({ input }) => ({ n: input.n }),
  initial: "doubling",
  states: {
    doubling: {
      invoke: {
        src: "double",
        input: ({ context }) => context.n,
        onDone: {
          target: "waiting",
          actions: [
            assign({ doubled: ({ event }) => event.output as number }),
            sendParent(({ event }) => ({ type: "PROGRESS", doubled: event.output })),
          ],
        },
      },
    },
    waiting: { on: { PING: { target: "done", actions: sendParent({ type: "PONG" }) } } },
    done: { type: "final" },
  },
  output: ({ context }) => ({ doubled: context.doubled }),
});

export const parent = setup({
  types: { context: {} as { seen: string[]; result?: unknown } },
  actors: { worker },
}).createMachine({
  id: "parent",
  context: { seen: [] },
  initial: "running",
  states: {
    running: {
      invoke: {
        id: "w",
        src: "worker",
        input: { n: 21 },
        onDone: { target: "finished", actions: assign({ result: ({ event }) => event.output }) },
        onError: { target: "failed" },
      },
      on: {
        PROGRESS: {
          actions: [assign({ seen: ({ context }) => [...context.seen, "progress"] }), sendTo("w", { type: "PING" })],
        },
        PONG: { actions: assign({ seen: ({ context }) => [...context.seen, "pong"] }) },
        CANCEL: { target: "cancelled" },
      },
    },
    finished: { type: "final" },
    failed: { type: "final" },
    cancelled: { type: "final" },
  },
  output: ({ context }) => ({ seen: context.seen, result: context.result }),
});

/** `n` children of `child` (ids `<prefix><i>`) started in one macrostep and joined; its output is how many ended. */
export function fanOut(id: string, n: number, child: AnyStateMachine, prefix = "c") {
  const ids = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  return setup({ actors: { child }, types: { context: {} as { done: number } } }).createMachine({
    id,
    context: { done: 0 },
    initial: "fan",
    states: {
      fan: {
        invoke: ids.map((childId) => ({
          id: childId,
          src: "child" as const,
          onDone: { actions: assign({ done: ({ context }: { context: { done: number } }) => context.done + 1 }) },
        })),
        always: { guard: ({ context }) => context.done === n, target: "joined" },
      },
      joined: { type: "final" },
    },
    output: ({ context }) => context.done,
  });
}
