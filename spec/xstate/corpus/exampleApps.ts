// Vendored from statelyai/xstate at b1811bf77bc2d1a74367328cec7907aa185b70df, XState's app examples:
//   examples/toggle/src/toggleMachine.ts, examples/counter/src/counterMachine.ts,
//   examples/7guis-temperature-react/src/temperatureMachine.ts, examples/stopwatch/src/stopwatchMachine.ts,
//   examples/friends-list-react/src/friendsMachine.ts and friendMachine.ts.
// The machines are as written there. Changes (each entry's `changes` lists its own): the events are what each
// example's UI sends; the stopwatch's callback `setInterval` runs on the harness's clock (`harnessTimers`); the
// friend's saveUser sleep (`await new Promise((r) => setTimeout(r, 1000))`) is removed and saveUser registered for
// loomwork under its name. `makeId` keeps `Math.random`: the harness seeds it per runtime.
import { assign, createMachine, fromCallback, fromPromise, setup, stopChild, type ActorRefFrom } from "xstate";
import { harnessTimers, promiseEffect, type CorpusMachine } from "../corpusTypes.js";

// examples/toggle/src/toggleMachine.ts
export const toggleMachine = createMachine({
  id: "toggle",
  initial: "inactive",
  states: {
    inactive: {
      on: {
        toggle: "active",
      },
    },
    active: {
      on: {
        toggle: "inactive",
      },
    },
  },
});

// examples/counter/src/counterMachine.ts
export const counterMachine = createMachine({
  id: "counter",
  context: {
    count: 0,
  },
  on: {
    increment: {
      actions: assign({
        count: ({ context }) => context.count + 1,
      }),
    },
    decrement: {
      actions: assign({
        count: ({ context }) => context.count - 1,
      }),
    },
  },
});

// examples/7guis-temperature-react/src/temperatureMachine.ts
interface TemperatureContext {
  tempC?: number | string;
  tempF?: number | string;
}

type TemperatureEvent =
  | {
      type: "CELSIUS";
      value: string;
    }
  | {
      type: "FAHRENHEIT";
      value: string;
    };

export const temperatureMachine = createMachine({
  types: {} as {
    context: TemperatureContext;
    events: TemperatureEvent;
  },
  context: { tempC: undefined, tempF: undefined },
  on: {
    CELSIUS: {
      actions: assign({
        tempC: ({ event }) => event.value,
        tempF: ({ event }) => (event.value.length ? +event.value * (9 / 5) + 32 : ""),
      }),
    },
    FAHRENHEIT: {
      actions: assign({
        tempC: ({ event }) => (event.value.length ? (+event.value - 32) * (5 / 9) : ""),
        tempF: ({ event }) => event.value,
      }),
    },
  },
});

// examples/stopwatch/src/stopwatchMachine.ts
export const stopwatchMachine = setup({
  actors: {
    ticks: fromCallback(({ sendBack }) => {
      const interval = harnessTimers.setInterval(() => {
        sendBack({ type: "TICK" });
      }, 10);
      return () => interval();
    }),
  },
}).createMachine({
  id: "stopwatch",
  initial: "stopped",
  context: {
    elapsed: 0,
  },
  states: {
    stopped: {
      on: {
        start: "running",
      },
    },
    running: {
      invoke: {
        src: "ticks",
      },
      on: {
        TICK: {
          actions: assign({
            elapsed: ({ context }) => context.elapsed + 1,
          }),
        },
        stop: "stopped",
      },
    },
  },
  on: {
    reset: {
      actions: assign({
        elapsed: 0,
      }),
      target: ".stopped",
    },
  },
});

// examples/friends-list-react/src/friendMachine.ts
const saveUser = async () => {
  return true;
};
export const friendMachine = setup({
  types: {
    context: {} as {
      prevName: string;
      name: string;
    },
    events: {} as
      | {
          type: "SET_NAME";
          value: string;
        }
      | {
          type: "SAVE";
        }
      | {
          type: "EDIT";
        }
      | {
          type: "CANCEL";
        },
    input: {} as {
      name: string;
    },
    tags: {} as "read" | "form" | "saving",
  },
  actors: {
    saveUser: fromPromise(saveUser),
  },
}).createMachine({
  id: "friend",
  initial: "reading",
  context: ({ input }) => ({
    prevName: input.name,
    name: input.name,
  }),
  states: {
    reading: {
      tags: "read",
      on: {
        EDIT: "editing",
      },
    },
    editing: {
      tags: "form",
      on: {
        SET_NAME: {
          actions: assign({ name: ({ event }) => event.value }),
        },
        SAVE: {
          target: "saving",
        },
      },
    },
    saving: {
      tags: ["form", "saving"],
      invoke: {
        src: "saveUser",
        onDone: {
          target: "reading",
          actions: assign({ prevName: ({ context }) => context.name }),
        },
      },
    },
  },
  on: {
    CANCEL: {
      actions: assign({ name: ({ context }) => context.prevName }),
      target: ".reading",
    },
  },
});

// examples/friends-list-react/src/friendsMachine.ts
const makeId = () => Math.random().toString(36).substring(7);

export const friendsMachine = createMachine({
  types: {} as {
    context: {
      newFriendName: string;
      friends: ActorRefFrom<typeof friendMachine>[];
    };
    events:
      | {
          type: "FRIENDS.ADD";
          name: string;
        }
      | {
          type: "NEW_FRIEND.CHANGE";
          name: string;
        }
      | {
          type: "FRIEND.REMOVE";
          index: number;
        };
  },
  id: "friends",
  context: {
    newFriendName: "",
    friends: [],
  },
  on: {
    "NEW_FRIEND.CHANGE": {
      actions: assign({
        newFriendName: ({ event }) => event.name,
      }),
    },
    "FRIENDS.ADD": {
      guard: ({ event }) => event.name.trim().length > 0,
      actions: assign({
        friends: ({ context, spawn }) =>
          context.friends.concat(
            spawn(friendMachine, {
              id: `friend-${makeId()}`,
              input: {
                name: context.newFriendName,
              },
            }),
          ),
        newFriendName: "",
      }),
    },
    "FRIEND.REMOVE": {
      actions: [
        // Stop the friend actor to unsubscribe
        // @ts-expect-error this repo's tsconfig sets noUncheckedIndexedAccess, the example's does not (a type-only line)
        stopChild(({ context, event }) => context.friends[event.index]),
        // Remove the friend from the list by index
        assign({
          friends: ({ context, event }) => context.friends.filter((_, index) => index !== event.index),
        }),
      ],
    },
  },
});

export const corpus: CorpusMachine[] = [
  {
    name: "toggle",
    source: "examples/toggle/src/toggleMachine.ts",
    machine: toggleMachine,
    steps: [{ send: { type: "toggle" } }, { send: { type: "toggle" } }, { send: { type: "toggle" } }],
    changes: [],
    features: ["states"],
  },
  {
    name: "counter",
    source: "examples/counter/src/counterMachine.ts",
    machine: counterMachine,
    steps: [
      { send: { type: "increment" } },
      { send: { type: "increment" } },
      { send: { type: "decrement" } },
      { send: { type: "increment" } },
    ],
    changes: [],
    features: ["assign"],
  },
  {
    name: "7guis-temperature",
    source: "examples/7guis-temperature-react/src/temperatureMachine.ts",
    machine: temperatureMachine,
    steps: [
      { send: { type: "CELSIUS", value: "100" } },
      { send: { type: "FAHRENHEIT", value: "32" } },
      { send: { type: "CELSIUS", value: "" } },
    ],
    changes: [],
    features: ["assign"],
  },
  {
    name: "stopwatch",
    source: "examples/stopwatch/src/stopwatchMachine.ts",
    machine: stopwatchMachine,
    steps: [
      { send: { type: "start" } },
      { advance: 30 },
      { advance: 20 },
      { send: { type: "stop" } },
      { send: { type: "reset" } },
    ],
    changes: ["the ticks callback's setInterval runs on the harness's clock (harnessTimers.setInterval)"],
    features: ["callback", "assign"],
  },
  {
    name: "friends-list",
    source: "examples/friends-list-react/src/friendsMachine.ts",
    machine: friendsMachine,
    steps: [
      { send: { type: "NEW_FRIEND.CHANGE", name: "David" } },
      { send: { type: "FRIENDS.ADD", name: "David" } },
      { send: { type: "NEW_FRIEND.CHANGE", name: "Mira" } },
      { send: { type: "FRIENDS.ADD", name: "Mira" } },
      { send: { type: "FRIEND.REMOVE", index: 0 } },
    ],
    effects: { saveUser: promiseEffect(saveUser) },
    changes: [
      "friendMachine's saveUser sleep removed and saveUser registered for loomwork under its name; makeId's Math.random is seeded per runtime by the harness",
    ],
    features: ["spawn in assign", "stop", "assign", "guards", "tags"],
  },
];
