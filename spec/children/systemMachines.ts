// Machines of one tree that find each other by systemId (ADR 0012 D4), shared by the memory and fleet tests.
import { type AnyActorRef, assign, createMachine, fromCallback, sendTo, setup } from "xstate";

// A caller child asks a sibling found by its systemId; the sibling answers the caller, found the same way.
export const answerer = setup({}).createMachine({
  id: "answerer",
  on: {
    ASK: { actions: sendTo(({ system }) => system.get("caller") as AnyActorRef, { type: "ANSWER", n: 42 }) },
  },
});
export const caller = setup({ types: { context: {} as { n: number } } }).createMachine({
  id: "caller",
  context: { n: 0 },
  initial: "asking",
  states: {
    asking: {
      entry: sendTo(({ system }) => system.get("answerer") as AnyActorRef, { type: "ASK" }),
      on: { ANSWER: { target: "done", actions: assign({ n: ({ event }) => event.n }) } },
    },
    done: { type: "final" },
  },
  output: ({ context }) => context.n,
});
export const siblings = setup({ actors: { answerer, caller }, types: { context: {} as { n: number } } }).createMachine({
  id: "siblings",
  context: { n: 0 },
  initial: "running",
  states: {
    running: {
      invoke: [
        { id: "a", src: "answerer", systemId: "answerer" },
        {
          id: "c",
          src: "caller",
          systemId: "caller",
          onDone: { target: "done", actions: assign({ n: ({ event }) => Number(event.output) }) },
        },
      ],
    },
    done: { type: "final" },
  },
  output: ({ context }) => context.n,
});

// A parent's callback actor, registered as "ear", hears a child that finds it through the tree's registry: by sendTo
// (a message of the tree) and by a custom action calling send; once it heard both it tells its parent, which ends.
export const earHolder = setup({
  actors: {
    ear: fromCallback(({ receive, sendBack }) => {
      const heard = new Set<string>();
      receive((event) => {
        heard.add(event.type);
        if (heard.has("PING") && heard.has("HELLO")) sendBack({ type: "HEARD" });
      });
    }),
    talker: createMachine({
      id: "talker",
      entry: [
        ({ system }) => (system?.get("ear") as AnyActorRef | undefined)?.send({ type: "HELLO" }),
        sendTo(({ system }) => system.get("ear") as AnyActorRef, { type: "PING" }),
      ],
    }),
  },
}).createMachine({
  id: "earHolder",
  initial: "listening",
  states: {
    listening: {
      invoke: [
        { id: "ear", src: "ear", systemId: "ear" },
        { id: "talker", src: "talker" },
      ],
      on: { HEARD: "done" },
    },
    done: { type: "final" },
  },
  output: () => "heard",
});
