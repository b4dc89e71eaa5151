// Vendored from statelyai/xstate at b1811bf77bc2d1a74367328cec7907aa185b70df, from XState's core tests (each entry
// names its file and test): packages/core/test/emit.test.ts, history.test.ts, tags.test.ts, spawnChild.test.ts,
// actions.test.ts (forwardTo, log, raise, cancel) and system.test.ts. The machines are as written there, with these
// changes (each entry's `changes` lists its own): the test's `expect(...)` or spy inside an action became a
// `console.log` (a side effect the harness observes); `vi.fn()` spies passed as actions became such a log; the
// test's `logger: consoleSpy` option is left out (XState's default logger is console.log, which the harness reads);
// an inline `fromPromise` is registered for loomwork under the name the test gives it; the test's sleeps are moves
// of the harness's clock.
import {
  cancel,
  createMachine,
  emit,
  forwardTo,
  fromCallback,
  fromPromise,
  log,
  raise,
  sendParent,
  sendTo,
  setup,
  spawnChild,
  type ActorRef,
  type Snapshot,
} from "xstate";
import { promiseEffect, type CorpusMachine } from "../corpusTypes.js";

// emit.test.ts 'dynamically emits events that can be listened to on actorRef.on(…)'
export const dynamicEmit = createMachine({
  context: { count: 10 },
  on: {
    someEvent: {
      actions: emit(({ context }) => ({
        type: "emitted",
        count: context.count,
      })),
    },
  },
});

// emit.test.ts 'wildcard listeners should be able to receive all emitted events'
export const wildcardEmit = setup({
  types: {
    events: {} as { type: "event" },
    emitted: {} as { type: "emitted" } | { type: "anotherEmitted" },
  },
}).createMachine({
  on: {
    event: {
      actions: emit({ type: "emitted" }),
    },
  },
});

// history.test.ts 'should go to the most recently visited state (explicit shallow history type)'
export const shallowHistory = createMachine({
  initial: "on",
  states: {
    on: {
      initial: "first",
      states: {
        first: {
          on: { SWITCH: "second" },
        },
        second: {},
        hist: {
          type: "history",
          history: "shallow",
        },
      },
      on: {
        POWER: "off",
      },
    },
    off: {
      on: { POWER: "on.hist" },
    },
  },
});

// history.test.ts 'should go to the most recently visited state by a transient transition'
export const transientHistory = createMachine({
  initial: "idle",
  states: {
    idle: {
      id: "idle",
      initial: "absent",
      states: {
        absent: {
          on: {
            DEPLOY: "#deploy",
          },
        },
        present: {
          on: {
            DEPLOY: "#deploy",
            DESTROY: "#destroy",
          },
        },
        hist: {
          type: "history",
        },
      },
    },
    working: {
      initial: "deploying",
      states: {
        deploying: {
          id: "deploy",
          on: {
            SUCCESS: "done",
            FAILURE: "#idle.hist",
          },
        },
        destroying: {
          id: "destroy",
          on: {
            SUCCESS: "done",
            FAILURE: "#idle.hist",
          },
        },
        done: {
          always: "#idle.present",
        },
      },
    },
  },
});

// tags.test.ts 'supports tags in compound states'
export const compoundTags = createMachine({
  initial: "red",
  states: {
    green: {
      tags: ["go"],
    },
    yellow: {},
    red: {
      tags: ["stop"],
      initial: "walk",
      states: {
        walk: {
          tags: ["crosswalkLight"],
        },
        wait: {
          tags: ["crosswalkLight"],
        },
      },
    },
  },
});

// tags.test.ts 'supports tags in parallel states'
export const parallelTags = createMachine({
  type: "parallel",
  states: {
    foo: {
      initial: "active",
      states: {
        active: {
          tags: "yes",
        },
        inactive: {
          tags: "no",
        },
      },
    },
    bar: {
      initial: "active",
      states: {
        active: {
          tags: "yes",
          on: {
            DEACTIVATE: "inactive",
          },
        },
        inactive: {
          tags: "no",
        },
      },
    },
  },
});

// spawnChild.test.ts 'can spawn from named actor'
const fetchNumCreator = ({ input }: { input: number }) => Promise.resolve(input * 2);
const fetchNum = fromPromise(fetchNumCreator);
export const spawnNamed = createMachine({
  types: {
    actors: {} as {
      src: "fetchNum";
      logic: typeof fetchNum;
    },
  },
  entry: spawnChild("fetchNum", { id: "child", input: 21 }),
}).provide({
  actors: { fetchNum },
});

// actions.test.ts forwardTo() 'should forward an event to a service'
const forwardChild = createMachine({
  types: {} as {
    events: {
      type: "EVENT";
      value: number;
    };
  },
  id: "child",
  initial: "active",
  states: {
    active: {
      on: {
        EVENT: {
          actions: sendParent({ type: "SUCCESS" }),
          guard: ({ event }) => event.value === 42,
        },
      },
    },
  },
});
export const forwardParent = createMachine({
  types: {} as {
    events:
      | {
          type: "EVENT";
          value: number;
        }
      | {
          type: "SUCCESS";
        };
  },
  id: "parent",
  initial: "first",
  states: {
    first: {
      invoke: { src: forwardChild, id: "myChild" },
      on: {
        EVENT: {
          actions: forwardTo("myChild"),
        },
        SUCCESS: "last",
      },
    },
    last: {
      type: "final",
    },
  },
});

// actions.test.ts log() 'should log a string', 'should log an expression'
export const logString = createMachine({
  entry: log("some string", "string label"),
});
export const logExpression = createMachine({
  context: {
    count: 42,
  },
  entry: log(({ context }) => `expr ${context.count}`, "expr label"),
});

// actions.test.ts raise 'should be able to send a delayed event to itself'
export const delayedRaiseToItself = createMachine({
  initial: "a",
  states: {
    a: {
      entry: raise(
        { type: "EVENT" },
        {
          delay: 1,
        },
      ),
      on: {
        TO_B: "b",
      },
    },
    b: {
      on: {
        EVENT: "c",
      },
    },
    c: {
      type: "final",
    },
  },
});

// actions.test.ts raise 'should be able to raise an event and respond to it in the same state'
export const raiseSameState = createMachine({
  initial: "a",
  states: {
    a: {
      entry: raise({ type: "TO_B" }),
      on: {
        TO_B: "b",
      },
    },
    b: {
      type: "final",
    },
  },
});

// actions.test.ts raise 'should be able to raise a delayed event and respond to it in the same state'
export const delayedRaiseSameState = createMachine({
  initial: "a",
  states: {
    a: {
      entry: raise(
        { type: "TO_B" },
        {
          delay: 100,
        },
      ),
      on: {
        TO_B: "b",
      },
    },
    b: {
      type: "final",
    },
  },
});

// actions.test.ts cancel 'should be possible to cancel a raised delayed event'
export const cancelRaised = createMachine({
  initial: "a",
  states: {
    a: {
      on: {
        NEXT: {
          actions: raise({ type: "RAISED" }, { delay: 1, id: "myId" }),
        },
        RAISED: "b",
        CANCEL: {
          actions: cancel("myId"),
        },
      },
    },
    b: {},
  },
});

// system.test.ts 'should register an invoked actor'
export const systemRegisterInvoked = createMachine({
  id: "parent",
  initial: "a",
  states: {
    a: {
      invoke: [
        {
          src: fromCallback(({ receive }) => {
            receive((event) => {
              console.log("receiver got", event.type);
            });
          }),
          systemId: "receiver",
        },
        {
          src: createMachine({
            id: "childmachine",
            entry: ({ system }) => {
              const receiver = system?.get("receiver") as ActorRef<Snapshot<unknown>, { type: "HELLO" }> | undefined;

              if (receiver) {
                receiver.send({ type: "HELLO" });
              }
            },
          }),
        },
      ],
    },
  },
});

// system.test.ts 'should be accessible in sendTo actions'
export const systemInSendTo = createMachine({
  invoke: {
    src: createMachine({}),
    systemId: "test",
  },
  initial: "a",
  states: {
    a: {
      entry: sendTo(
        ({ system }) => {
          console.log("system.get(test) defined:", system.get("test") !== undefined);
          return system.get("test");
        },
        { type: "FOO" },
      ),
    },
  },
});

export const corpus: CorpusMachine[] = [
  {
    name: "emit/dynamic",
    source: "packages/core/test/emit.test.ts",
    machine: dynamicEmit,
    steps: [{ send: { type: "someEvent" } }],
    changes: ["the test awaits `actor.on('emitted')`; the harness listens on '*'"],
    features: ["emit"],
  },
  {
    name: "emit/wildcard",
    source: "packages/core/test/emit.test.ts",
    machine: wildcardEmit,
    steps: [{ send: { type: "event" } }, { send: { type: "event" } }],
    changes: ["the test sends `event` once; the entry sends it twice"],
    features: ["emit"],
  },
  {
    name: "history/shallow",
    source: "packages/core/test/history.test.ts",
    machine: shallowHistory,
    steps: [{ send: { type: "SWITCH" } }, { send: { type: "POWER" } }, { send: { type: "POWER" } }],
    changes: [],
    features: ["history", "states"],
  },
  {
    name: "history/transient",
    source: "packages/core/test/history.test.ts",
    machine: transientHistory,
    steps: [
      { send: { type: "DEPLOY" } },
      { send: { type: "SUCCESS" } },
      { send: { type: "DESTROY" } },
      { send: { type: "FAILURE" } },
    ],
    changes: [],
    features: ["history", "states"],
  },
  {
    name: "tags/compound",
    source: "packages/core/test/tags.test.ts",
    machine: compoundTags,
    steps: [],
    changes: [],
    features: ["tags"],
  },
  {
    name: "tags/parallel",
    source: "packages/core/test/tags.test.ts",
    machine: parallelTags,
    steps: [{ send: { type: "DEACTIVATE" } }],
    changes: [],
    features: ["tags", "parallel"],
  },
  {
    name: "spawnChild/named-promise",
    source: "packages/core/test/spawnChild.test.ts",
    machine: spawnNamed,
    steps: [],
    effects: { fetchNum: promiseEffect(fetchNumCreator) },
    changes: ["fetchNum (the test's named promise actor) registered for loomwork under its name"],
    features: ["spawnChild", "invoke promise"],
  },
  {
    name: "forwardTo/service",
    source: "packages/core/test/actions.test.ts",
    machine: forwardParent,
    steps: [{ send: { type: "EVENT", value: 42 } }],
    changes: [],
    features: ["forwardTo", "sendParent", "invoke machine", "guards", "final"],
  },
  {
    name: "log/string",
    source: "packages/core/test/actions.test.ts",
    machine: logString,
    steps: [],
    changes: [
      "the test's `logger: consoleSpy` left out: XState's default logger (console.log) is what the harness reads",
    ],
    features: ["log"],
  },
  {
    name: "log/expression",
    source: "packages/core/test/actions.test.ts",
    machine: logExpression,
    steps: [],
    changes: [
      "the test's `logger: consoleSpy` left out: XState's default logger (console.log) is what the harness reads",
    ],
    features: ["log"],
  },
  {
    name: "raise/delayed-to-itself",
    source: "packages/core/test/actions.test.ts",
    machine: delayedRaiseToItself,
    steps: [{ send: { type: "TO_B" } }, { advance: 1 }],
    changes: ["the test waits for completion; the entry moves the clock 1 ms"],
    features: ["delayed raise", "final"],
  },
  {
    name: "raise/same-state",
    source: "packages/core/test/actions.test.ts",
    machine: raiseSameState,
    steps: [],
    changes: [],
    features: ["raise", "final"],
  },
  {
    name: "raise/delayed-same-state",
    source: "packages/core/test/actions.test.ts",
    machine: delayedRaiseSameState,
    steps: [{ advance: 50 }, { advance: 50 }],
    changes: ["the test's `await sleep(50)` twice: the clock moved 50 ms twice"],
    features: ["delayed raise", "final"],
  },
  {
    name: "cancel/raised-delayed",
    source: "packages/core/test/actions.test.ts",
    machine: cancelRaised,
    steps: [{ send: { type: "NEXT" } }, { send: { type: "CANCEL" } }, { advance: 10 }],
    changes: ["the test's `await sleep(10)`: the clock moved 10 ms"],
    features: ["delayed raise", "states"],
  },
  {
    name: "system/register-invoked",
    source: "packages/core/test/system.test.ts",
    machine: systemRegisterInvoked,
    steps: [],
    changes: [
      "the callback's `expect(event.type).toBe('HELLO'); resolve()` became a console.log of the event type; the `MySystem` type cast is inline",
    ],
    features: ["systemId", "system.get", "callback", "invoke machine"],
  },
  {
    name: "system/sendTo-system-get",
    source: "packages/core/test/system.test.ts",
    machine: systemInSendTo,
    steps: [],
    changes: ["the `expect(system.get('test')).toBeDefined()` became a console.log of whether it is defined"],
    features: ["systemId", "system.get", "sendTo", "invoke machine"],
  },
];
