// Vendored from statelyai/xstate at b1811bf77bc2d1a74367328cec7907aa185b70df: packages/core/test/invoke.test.ts
// (each entry names its test). The machines are as written there, with these changes (each entry's `changes`
// lists its own): an inline `fromPromise` moved to the machine's `actors` under a name (the change the goal
// allows: loomwork runs a promise actor as an effect registered by that name) and registered for loomwork;
// `createPromise` is the test's `Promise` variant (`new Promise(executor)`); rxjs's `interval(10)` is a
// hand-written observable on the harness's clock (`harnessTimers`), since rxjs is not a dependency here;
// the test's `expect(...)` and its promise became the entry's `until` conditions.
import {
  assign,
  createMachine,
  fromCallback,
  fromObservable,
  fromPromise,
  sendParent,
  sendTo,
  type Subscribable,
} from "xstate";
import { harnessTimers, promiseEffect, type CorpusMachine } from "../corpusTypes.js";

const done = (s: { status: string }) => s.status === "done";
const createPromise = <T>(executor: (resolve: (value: T) => void, reject: (reason?: unknown) => void) => void) =>
  new Promise<T>(executor);

/** rxjs's `interval(ms)` (and `.pipe(take(n))`), by hand, on the harness's clock. */
function interval(ms: number, take = Infinity): Subscribable<number> {
  return {
    subscribe(observer: any) {
      let n = 0;
      const next = typeof observer === "function" ? observer : observer?.next?.bind(observer);
      const complete = typeof observer === "function" ? undefined : observer?.complete?.bind(observer);
      const cancel = harnessTimers.setInterval(() => {
        if (n >= take) return;
        next?.(n++);
        if (n >= take) {
          cancel();
          complete?.();
        }
      }, ms);
      return { unsubscribe: () => cancel() };
    },
  } as Subscribable<number>;
}

// 'child can immediately respond to the parent with multiple events'
const childMachine = createMachine({
  types: {} as {
    events: { type: "FORWARD_DEC" };
  },
  id: "child",
  initial: "init",
  states: {
    init: {
      on: {
        FORWARD_DEC: {
          actions: [sendParent({ type: "DEC" }), sendParent({ type: "DEC" }), sendParent({ type: "DEC" })],
        },
      },
    },
  },
});
export const someParentMachine = createMachine(
  {
    id: "parent",
    types: {} as {
      context: { count: number };
      actors: {
        src: "child";
        id: "someService";
        logic: typeof childMachine;
      };
    },
    context: { count: 0 },
    initial: "start",
    states: {
      start: {
        invoke: {
          src: "child",
          id: "someService",
        },
        always: {
          target: "stop",
          guard: ({ context }) => context.count === -3,
        },
        on: {
          DEC: {
            actions: assign({ count: ({ context }) => context.count - 1 }),
          },
          FORWARD_DEC: {
            actions: sendTo("someService", { type: "FORWARD_DEC" }),
          },
        },
      },
      stop: {
        type: "final",
      },
    },
  },
  {
    actors: {
      child: childMachine,
    },
  },
);

// describe('parent to child')
const subMachine = createMachine({
  id: "child",
  initial: "one",
  states: {
    one: {
      on: { NEXT: "two" },
    },
    two: {
      entry: sendParent({ type: "NEXT" }),
    },
  },
});
// 'should communicate with the child machine (invoke on machine)'
export const invokeOnMachine = createMachine({
  id: "parent",
  initial: "one",
  invoke: {
    id: "foo-child",
    src: subMachine,
  },
  states: {
    one: {
      entry: sendTo("foo-child", { type: "NEXT" }),
      on: { NEXT: "two" },
    },
    two: {
      type: "final",
    },
  },
});
// 'should transition correctly if child invocation causes it to directly go to final state'
const doneSubMachine = createMachine({
  id: "child",
  initial: "one",
  states: {
    one: {
      on: { NEXT: "two" },
    },
    two: {
      type: "final",
    },
  },
});
export const childGoesFinal = createMachine({
  id: "parent",
  initial: "one",
  states: {
    one: {
      invoke: {
        id: "foo-child",
        src: doneSubMachine,
        onDone: "two",
      },
      entry: sendTo("foo-child", { type: "NEXT" }),
    },
    two: {
      on: { NEXT: "three" },
    },
    three: {
      type: "final",
    },
  },
});

// describe('with promises'): invokePromiseMachine, 'should be invoked with a promise factory and reject with ErrorExecution'
const invokePromise = ({ input }: { input: any }) =>
  createPromise((resolve) => {
    if (input.succeed) {
      resolve(input.id);
    } else {
      throw new Error(`failed on purpose for: ${input.id}`);
    }
  });
export const invokePromiseMachine = createMachine(
  {
    types: {} as { context: { id: number; succeed: boolean } },
    id: "invokePromise",
    initial: "pending",
    context: ({ input }: { input: { id?: number; succeed?: boolean } }) => ({
      id: 42,
      succeed: true,
      ...input,
    }),
    states: {
      pending: {
        invoke: {
          src: "invokePromise",
          input: ({ context }: any) => context,
          onDone: {
            target: "success",
            guard: ({ context, event }) => {
              return event.output === context.id;
            },
          },
          onError: "failure",
        },
      },
      success: {
        type: "final",
      },
      failure: {
        type: "final",
      },
    },
  },
  { actors: { invokePromise: fromPromise(invokePromise) } },
);

// 'should assign the resolved data when invoked with a promise factory'
const resolveCount = () => createPromise<{ count: number }>((resolve) => resolve({ count: 1 }));
export const promiseMachine = createMachine(
  {
    types: {} as { context: { count: number } },
    id: "promise",
    context: { count: 0 },
    initial: "pending",
    states: {
      pending: {
        invoke: {
          src: "resolveCount",
          onDone: {
            target: "success",
            actions: assign({
              count: ({ event }) => event.output.count,
            }),
          },
        },
      },
      success: {
        type: "final",
      },
    },
  },
  { actors: { resolveCount: fromPromise(resolveCount) } },
);

// describe('with callbacks'): 'should transition correctly if callback function sends an event'
export const callbackMachine = createMachine(
  {
    id: "callback",
    initial: "pending",
    context: { foo: true },
    states: {
      pending: {
        on: { BEGIN: "first" },
      },
      first: {
        invoke: {
          src: "someCallback",
        },
        on: { CALLBACK: "intermediate" },
      },
      intermediate: {
        on: { NEXT: "last" },
      },
      last: {
        type: "final",
      },
    },
  },
  {
    actors: {
      someCallback: fromCallback(({ sendBack }) => {
        sendBack({ type: "CALLBACK" });
      }),
    },
  },
);

// 'callback should be able to receive messages from parent'
export const pingPongMachine = createMachine({
  id: "ping-pong",
  initial: "active",
  states: {
    active: {
      invoke: {
        id: "child",
        src: fromCallback(({ sendBack, receive }) => {
          receive((e) => {
            if (e.type === "PING") {
              sendBack({ type: "PONG" });
            }
          });
        }),
      },
      entry: sendTo("child", { type: "PING" }),
      on: {
        PONG: "done",
      },
    },
    done: {
      type: "final",
    },
  },
});

// describe('with observables'): 'should work with a finite observable'
interface Ctx {
  count: number | undefined;
}
interface Events {
  type: "COUNT";
  value: number;
}
export const obsMachine = createMachine({
  types: {} as { context: Ctx; events: Events },
  id: "obs",
  initial: "counting",
  context: {
    count: undefined,
  },
  states: {
    counting: {
      invoke: {
        src: fromObservable(() => interval(10, 5)),
        onSnapshot: {
          actions: assign({
            count: ({ event }) => event.snapshot.context,
          }),
        },
        onDone: {
          target: "counted",
          guard: ({ context }) => context.count === 4,
        },
      },
    },
    counted: {
      type: "final",
    },
  },
});

// describe('with machines'): 'should emit onSnapshot'
const snapshotChild = createMachine({
  initial: "a",
  states: {
    a: {
      after: {
        10: "b",
      },
    },
    b: {},
  },
});
export const onSnapshotMachine = createMachine(
  {
    types: {} as {
      actors: { src: "childMachine"; logic: typeof snapshotChild };
      context: { seen?: string };
    },
    invoke: {
      src: "childMachine",
      onSnapshot: {
        actions: ({ event }) => {
          if (event.snapshot.value === "b") {
            console.log("child reached b");
          }
        },
      },
    },
  },
  {
    actors: {
      childMachine: snapshotChild,
    },
  },
);

const source = "packages/core/test/invoke.test.ts";
export const corpus: CorpusMachine[] = [
  {
    name: "invoke/child-responds-with-multiple-events",
    source,
    machine: someParentMachine,
    steps: [{ send: { type: "FORWARD_DEC" } }],
    changes: [],
    features: ["invoke machine", "sendTo", "sendParent", "assign", "guards", "final"],
  },
  {
    name: "invoke/parent-to-child-on-machine",
    source,
    machine: invokeOnMachine,
    steps: [],
    changes: [],
    features: ["invoke machine", "sendTo", "sendParent", "final"],
  },
  {
    name: "invoke/child-goes-final",
    source,
    machine: childGoesFinal,
    steps: [{ send: { type: "NEXT" } }],
    changes: ["the test only reads the state after start; the entry also sends NEXT (state two's own event)"],
    features: ["invoke machine", "sendTo", "onDone", "final"],
  },
  {
    name: "invoke/promise-rejects",
    source,
    machine: invokePromiseMachine,
    input: { id: 31, succeed: false },
    startUntil: done,
    startUntilText: "done",
    steps: [],
    effects: { invokePromise: promiseEffect(invokePromise) },
    changes: ["the inline fromPromise moved to `actors` as invokePromise and registered for loomwork under that name"],
    features: ["invoke promise", "input", "guards", "final"],
  },
  {
    name: "invoke/promise-resolves",
    source,
    machine: invokePromiseMachine,
    input: { id: 7 },
    startUntil: done,
    startUntilText: "done",
    steps: [],
    effects: { invokePromise: promiseEffect(invokePromise) },
    changes: [
      "the same machine with input { id: 7 } (the test's succeeding variant); the inline fromPromise moved to `actors` as invokePromise and registered under that name",
    ],
    features: ["invoke promise", "input", "guards", "final"],
  },
  {
    name: "invoke/promise-assigns",
    source,
    machine: promiseMachine,
    startUntil: done,
    startUntilText: "done",
    steps: [],
    effects: { resolveCount: promiseEffect(resolveCount) },
    changes: ["the inline fromPromise moved to `actors` as resolveCount and registered for loomwork under that name"],
    features: ["invoke promise", "assign", "final"],
  },
  {
    name: "invoke/callback-sends-back",
    source,
    machine: callbackMachine,
    steps: [{ send: { type: "BEGIN" } }, { send: { type: "NEXT" } }],
    changes: ["the test sends BEGIN and reads the states; the entry also sends NEXT (state intermediate's event)"],
    features: ["callback", "final"],
  },
  {
    name: "invoke/callback-receives",
    source,
    machine: pingPongMachine,
    steps: [],
    changes: [],
    features: ["callback", "sendTo", "final"],
  },
  {
    name: "invoke/finite-observable",
    source,
    machine: obsMachine,
    steps: [{ advance: 100, until: done, untilText: "done" }],
    changes: ["rxjs's interval(10).pipe(take(5)) written by hand on the harness's clock (rxjs is not a dependency)"],
    features: ["observable", "onSnapshot", "onDone", "assign", "guards", "final"],
  },
  {
    name: "invoke/machine-onSnapshot",
    source,
    machine: onSnapshotMachine,
    steps: [{ advance: 10 }],
    changes: [
      "the test resolves its promise in the onSnapshot action; the action logs instead (a side effect the harness observes)",
    ],
    features: ["invoke machine", "onSnapshot", "after", "actions"],
  },
];
