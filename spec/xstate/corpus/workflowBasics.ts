// Vendored from statelyai/xstate at b1811bf77bc2d1a74367328cec7907aa185b70df (XState's serverless-workflow examples):
//   examples/workflow-hello/main.ts, examples/workflow-greeting/main.ts, examples/workflow-event-greeting/main.ts,
//   examples/workflow-async-function/main.ts, examples/workflow-parallel/main.ts,
//   examples/workflow-filling-water/main.ts, examples/workflow-math-problem/main.ts.
// The machines are as written there. Changes, for every machine below: the example's own run code (createActor,
// subscribe, start, send) became the entry's input and steps; a promise body's `await new Promise((r) =>
// setTimeout(r, N))` is removed (the harness never sleeps: the wait is on the actor's state instead); each
// promise actor is registered for loomwork under its name (`effects`). Each entry's `changes` repeats what applies.
import { assign, createMachine, fromPromise, setup } from "xstate";
import { promiseEffect, type CorpusMachine } from "../corpusTypes.js";

const done = (s: { status: string }) => s.status === "done";

// examples/workflow-hello/main.ts
export const helloworld = createMachine({
  id: "helloworld",
  initial: "Hello State",
  states: {
    "Hello State": {
      type: "final",
      output: {
        result: "Hello World!",
      },
    },
  },
});

// examples/workflow-greeting/main.ts
const greetingFunction = async ({ input }: { input: { name: string } }) => {
  return {
    greeting: `Hello, ${input.name}!`,
  };
};
export const greeting = setup({
  types: {
    context: {} as {
      greeting: string | undefined;
    },
    input: {} as {
      person: {
        name: string;
      };
    },
  },
  actors: {
    greetingFunction: fromPromise(greetingFunction),
  },
}).createMachine({
  id: "greeting",
  context: {
    greeting: undefined,
  },
  initial: "Greet",
  states: {
    Greet: {
      invoke: {
        src: "greetingFunction",
        input: ({ event }) => ({
          name: event.input.person.name,
        }),
        onDone: {
          target: "Greeted",
          actions: assign({
            greeting: ({ event }) => event.output.greeting,
          }),
        },
      },
    },
    Greeted: {
      type: "final",
      output: ({ context }) => ({
        greeting: context.greeting,
      }),
    },
  },
});

// examples/workflow-event-greeting/main.ts
export const eventGreeting = setup({
  types: {
    events: {} as { type: "greet"; greet: { name: string } },
  },
  actors: {
    greetingFunction: fromPromise(greetingFunction),
  },
}).createMachine({
  id: "event-greeting",

  initial: "Waiting",
  states: {
    Waiting: {
      on: {
        greet: "Greet",
      },
    },
    Greet: {
      invoke: {
        src: "greetingFunction",
        input: ({ event }) => ({
          name: event.greet.name,
        }),
        onDone: {
          target: "Greeted",
          actions: assign({
            greeting: ({ event }) => event.output.greeting,
          }),
        },
      },
    },
    Greeted: {
      type: "final",
      output: ({ context }) => ({
        greeting: context.greeting,
      }),
    },
  },
});

// examples/workflow-async-function/main.ts
const sendEmail = async ({ input }: { input: { customer: string } }) => {
  console.log("Sending email to", input.customer);
  console.log("Email sent to", input.customer);
};
export const asyncFunction = setup({
  types: {
    input: {} as {
      customer: string;
    },
  },
  actors: {
    sendEmail: fromPromise(sendEmail),
  },
}).createMachine({
  id: "async-function-invocation",
  initial: "Send email",
  context: ({ input }) => ({
    customer: input.customer,
  }),
  states: {
    "Send email": {
      invoke: {
        src: "sendEmail",
        input: ({ context }) => ({
          customer: context.customer,
        }),
        onDone: "Email sent",
      },
    },
    "Email sent": {
      type: "final",
    },
  },
});

// examples/workflow-parallel/main.ts
const shortDelay = async () => {
  console.log("Resolved shortDelay");
};
const longDelay = async () => {
  console.log("Resolved longDelay");
};
export const parallelExecution = setup({
  actors: {
    shortDelay: fromPromise(shortDelay),
    longDelay: fromPromise(longDelay),
  },
}).createMachine({
  id: "parallel-execution",
  initial: "ParallelExec",
  states: {
    ParallelExec: {
      type: "parallel",
      states: {
        ShortDelayBranch: {
          initial: "active",
          states: {
            active: {
              invoke: {
                src: "shortDelay",
                onDone: "done",
              },
            },
            done: {
              type: "final",
            },
          },
        },
        LongDelayBranch: {
          initial: "active",
          states: {
            active: {
              invoke: {
                src: "longDelay",
                onDone: "done",
              },
            },
            done: {
              type: "final",
            },
          },
        },
      },
      onDone: "Success",
    },
    Success: {
      type: "final",
    },
  },
});

// examples/workflow-filling-water/main.ts
export const fillGlassOfWater = createMachine({
  id: "fillglassofwater",
  types: {} as {
    events: {
      type: "WaterAddedEvent";
    };
    context: {
      counts: {
        current: number;
        max: number;
      };
    };
    input: {
      current: number;
      max: number;
    };
  },
  initial: "CheckIfFull",
  context: ({ input }) => ({
    counts: input,
  }),
  states: {
    CheckIfFull: {
      always: [
        {
          target: "AddWater",
          guard: ({ context }) => context.counts.current < context.counts.max,
        },
        {
          target: "GlassFull",
        },
      ],
    },
    AddWater: {
      after: {
        500: {
          actions: assign({
            counts: ({ context }) => ({
              ...context.counts,
              current: context.counts.current + 1,
            }),
          }),
          target: "CheckIfFull",
        },
      },
    },
    GlassFull: {
      type: "final",
    },
  },
});

// examples/workflow-math-problem/main.ts
const batchMathFunction = async ({
  input,
}: {
  input: {
    problems: string[];
  };
}) => {
  return await Promise.all(
    input.problems.map(async (problem) => {
      console.log("solving", problem);
      return {
        problem,
        result: `Solved ${problem}`,
      };
    }),
  );
};
export const mathProblem = setup({
  types: {
    context: {} as {
      results: string[] | undefined;
    },
  },
  actors: {
    batchMathFunction: fromPromise(batchMathFunction),
  },
}).createMachine({
  id: "math-problem",
  initial: "Solve",
  context: {
    results: undefined,
  },
  states: {
    Solve: {
      invoke: {
        src: "batchMathFunction",
        input: ({ event }) => ({
          problems: event.input.expressions,
        }),
        onDone: {
          target: "Solved",
          actions: assign({
            results: ({ event }) => event.output.map((r) => r.result),
          }),
        },
      },
    },
    Solved: {
      type: "final",
      output: ({ context }) => ({
        results: context.results,
      }),
    },
  },
});

const sleepRemoved = "the promise body's setTimeout sleep removed (the harness waits on the state instead)";
const registered = (names: string) =>
  `${names} registered for loomwork as a task effect under ${names.includes(",") ? "their names" : "its name"}`;

export const corpus: CorpusMachine[] = [
  {
    name: "workflow-hello",
    source: "examples/workflow-hello/main.ts",
    machine: helloworld,
    steps: [],
    changes: [],
    features: ["states", "final", "output"],
  },
  {
    name: "workflow-greeting",
    source: "examples/workflow-greeting/main.ts",
    machine: greeting,
    input: { person: { name: "Jenny" } },
    startUntil: done,
    startUntilText: "done",
    steps: [],
    effects: { greetingFunction: promiseEffect(greetingFunction) },
    changes: [sleepRemoved, registered("greetingFunction")],
    features: ["invoke promise", "assign", "input", "output", "final"],
  },
  {
    name: "workflow-event-greeting",
    source: "examples/workflow-event-greeting/main.ts",
    machine: eventGreeting,
    steps: [{ send: { type: "greet", greet: { name: "Jenny" } }, until: done, untilText: "done" }],
    effects: { greetingFunction: promiseEffect(greetingFunction) },
    changes: [sleepRemoved, registered("greetingFunction")],
    features: ["invoke promise", "assign", "output", "final"],
  },
  {
    name: "workflow-async-function",
    source: "examples/workflow-async-function/main.ts",
    machine: asyncFunction,
    input: { customer: "david@example.com" },
    startUntil: done,
    startUntilText: "done",
    steps: [],
    effects: { sendEmail: promiseEffect(sendEmail) },
    changes: [
      `the promise body's setTimeout removed: its two console.log calls run in a row; ${registered("sendEmail")}`,
    ],
    features: ["invoke promise", "input", "final"],
  },
  {
    name: "workflow-parallel",
    source: "examples/workflow-parallel/main.ts",
    machine: parallelExecution,
    startUntil: done,
    startUntilText: "done",
    steps: [],
    effects: { shortDelay: promiseEffect(shortDelay), longDelay: promiseEffect(longDelay) },
    changes: [sleepRemoved, registered("shortDelay, longDelay")],
    features: ["parallel", "invoke promise", "final"],
  },
  {
    name: "workflow-filling-water",
    source: "examples/workflow-filling-water/main.ts",
    machine: fillGlassOfWater,
    input: { current: 0, max: 10 },
    steps: [{ advance: 500 }, { advance: 2_000 }, { advance: 5_000 }],
    changes: ["the example's real 500 ms timers run on the harness's clock, advanced 500, 2,000 and 5,000 ms"],
    features: ["guards", "after", "assign", "input", "final"],
  },
  {
    name: "workflow-math-problem",
    source: "examples/workflow-math-problem/main.ts",
    machine: mathProblem,
    input: { expressions: ["2+2", "4-1", "10x3", "20/2"] },
    startUntil: done,
    startUntilText: "done",
    steps: [],
    effects: { batchMathFunction: promiseEffect(batchMathFunction) },
    changes: [sleepRemoved, registered("batchMathFunction")],
    features: ["invoke promise", "assign", "input", "output", "final"],
  },
];
