// Vendored from statelyai/xstate at b1811bf77bc2d1a74367328cec7907aa185b70df (XState's serverless-workflow examples):
//   examples/workflow-monitor-patient/main.ts, examples/workflow-purchase-order-deadline/main.ts,
//   examples/workflow-check-inbox/main.ts, examples/workflow-car-vitals/main.ts, examples/workflow-event-based/main.ts.
// The machines are as written there. Changes (each entry's `changes` lists its own): the example's run code became
// the entry's steps, its `await delay(ms)` between sends a move of the harness's clock; a promise body's sleep
// (`await delay(ms)`, a random failure with probability 0) is removed; a callback actor's `setInterval` runs on
// the harness's clock (`harnessTimers`); promise actors are registered for loomwork under their names.
import { assign, createMachine, fromCallback, fromPromise, log, setup } from "xstate";
import { harnessTimers, promiseEffect, type CorpusMachine } from "../corpusTypes.js";

const done = (s: { status: string }) => s.status === "done";

// examples/workflow-monitor-patient/main.ts
export const patientVitalsWorkflow = createMachine(
  {
    id: "patientVitalsWorkflow",
    types: {
      input: {} as {
        patientId: string;
      },
      context: {} as {
        patientId: string;
      },
      events: {} as
        | {
            type: "org.monitor.highBodyTemp";
            source: "monitoringSource";
            id: string;
            time: string;
            patientId: string;
            data: { value: string };
          }
        | {
            type: "org.monitor.highBloodPressure";
            source: "monitoringSource";
            id: string;
            time: string;
            patientId: string;
            data: { value: string };
          }
        | {
            type: "org.monitor.highRespirationRate";
            source: "monitoringSource";
            id: string;
            time: string;
            patientId: string;
            data: { value: string };
          },
    },
    context: ({ input }) => ({
      patientId: input.patientId,
    }),
    initial: "MonitorVitals",
    states: {
      MonitorVitals: {
        on: {
          "org.monitor.highBodyTemp": {
            actions: "sendTylenolOrder",
          },
          "org.monitor.highBloodPressure": {
            actions: "callNurse",
          },
          "org.monitor.highRespirationRate": {
            actions: "callPulmonologist",
          },
        },
      },
    },
  },
  {
    actions: {
      sendTylenolOrder: ({ context }) => {
        console.log("Executing sendTylenolOrder for patient:", context.patientId);
      },
      callNurse: ({ context }) => {
        console.log("Executing callNurse for patient:", context.patientId);
      },
      callPulmonologist: ({ context }) => {
        console.log("Executing callPulmonologist for patient:", context.patientId);
      },
    },
  },
);
const vital = (
  type: "org.monitor.highBodyTemp" | "org.monitor.highBloodPressure" | "org.monitor.highRespirationRate",
) => ({
  type,
  source: "monitoringSource",
  id: "event1",
  time: "2026-01-01T00:00:00.000Z",
  patientId: "patient1",
  data: { value: "value1" },
});

// examples/workflow-purchase-order-deadline/main.ts
const cancelOrder = async () => {
  console.log("Starting CancelOrder");
  console.log("Completed CancelOrder");
};
export const order = createMachine(
  {
    id: "order",
    types: {} as {
      events:
        | {
            type: "OrderCreatedEvent";
          }
        | {
            type: "OrderConfirmedEvent";
          }
        | {
            type: "ShipmentSentEvent";
          }
        | {
            type: "OrderFinishedEvent";
          };
    },
    initial: "StartNewOrder",
    after: {
      PT30D: { target: ".CancelOrder" },
    },
    states: {
      StartNewOrder: {
        on: {
          OrderCreatedEvent: {
            actions: ["logNewOrderCreated"],
            target: "WaitForOrderConfirmation",
          },
        },
      },
      WaitForOrderConfirmation: {
        on: {
          OrderConfirmedEvent: {
            actions: ["logOrderConfirmed"],
            target: "WaitOrderShipped",
          },
        },
      },
      WaitOrderShipped: {
        on: {
          ShipmentSentEvent: {
            actions: ["logOrderShipped"],
            target: "OrderFinished",
          },
        },
      },
      OrderFinished: {
        type: "final",
        entry: ["logOrderFinished"],
      },
      CancelOrder: {
        invoke: {
          src: "CancelOrder",
          onDone: {
            target: "OrderCancelled",
          },
        },
      },
      OrderCancelled: {
        type: "final",
        entry: ["logOrderCancelled"],
      },
    },
  },
  {
    delays: {
      // 15 seconds instead of 30 days
      PT30D: 15 * 1000,
    },
    actions: {
      logNewOrderCreated: () => {
        console.log("logNewOrderCreated");
      },
      logOrderConfirmed: () => {
        console.log("logOrderConfirmed");
      },
      logOrderShipped: () => {
        console.log("logOrderShipped");
      },
      logOrderFinished: () => {
        console.log("logOrderFinished");
      },
      logOrderCancelled: () => {
        console.log("logOrderCancelled");
      },
    },
    actors: {
      CancelOrder: fromPromise(cancelOrder),
    },
  },
);

// examples/workflow-check-inbox/main.ts
interface Message {
  subject: string;
  priority: "high" | "low";
}
const checkInboxFunction = async () => {
  return [
    {
      subject: "Hello",
      priority: "high",
    },
    {
      subject: "Hi",
      priority: "low",
    },
  ] satisfies Message[];
};
const sendTextsFunction = async ({ input }: { input: { messages: Message[] } }) => {
  await Promise.all(
    input.messages.map(async (message) => {
      console.log("sending text", message.subject);
      console.log("text sent", message.subject);
    }),
  );
  return {
    status: "success",
  };
};
export const checkInbox = setup({
  types: {
    context: {} as {
      messages: Message[];
    },
  },
  actors: {
    schedule: fromCallback<any, { interval: number }>(({ input, sendBack }) => {
      const cancel = harnessTimers.setInterval(() => {
        sendBack({ type: "reminder" });
      }, input.interval);
      return () => {
        cancel();
      };
    }),
    checkInboxFunction: fromPromise(checkInboxFunction),
    sendTextsFunction: fromPromise(sendTextsFunction),
  },
}).createMachine({
  id: "checkInbox",
  initial: "Idle",
  context: {
    messages: [],
  },
  invoke: {
    src: "schedule",
    input: {
      interval: 2000,
    },
  },
  states: {
    Idle: {
      on: {
        reminder: "CheckInbox",
      },
    },
    CheckInbox: {
      invoke: {
        src: "checkInboxFunction",
        onDone: {
          target: "SendTextForHighPriority",
          actions: assign({
            messages: ({ event }) => event.output,
          }),
        },
      },
    },
    SendTextForHighPriority: {
      invoke: {
        src: "sendTextsFunction",
        input: ({ context }) => ({
          messages: context.messages,
        }),
        onDone: {
          target: "Idle",
        },
      },
    },
  },
});

// examples/workflow-car-vitals/main.ts
const vital100 = (name: string) => async () => {
  console.log(`Starting ${name}`);
  console.log(`Completed ${name}`);
  return { value: 100 };
};
const vitalsWorkflow = createMachine(
  {
    id: "vitalscheck",
    context: {
      tirePressure: null,
      oilPressure: null,
      coolantLevel: null,
      battery: null,
    },
    initial: "CheckVitals",
    states: {
      CheckVitals: {
        invoke: [
          {
            src: "checkTirePressure",
            onDone: {
              actions: assign({
                tirePressure: ({ event }) => event.output,
              }),
            },
          },
          {
            src: "checkOilPressure",
            onDone: {
              actions: assign({
                oilPressure: ({ event }) => event.output,
              }),
            },
          },
          {
            src: "checkCoolantLevel",
            onDone: {
              actions: assign({
                coolantLevel: ({ event }) => event.output,
              }),
            },
          },
          {
            src: "checkBattery",
            onDone: {
              actions: assign({
                battery: ({ event }) => event.output,
              }),
            },
          },
        ],
        always: {
          guard: ({ context }) => {
            return !!(context.tirePressure && context.oilPressure && context.coolantLevel && context.battery);
          },
          target: "VitalsChecked",
        },
      },
      VitalsChecked: {
        type: "final",
        output: ({ context }) => context,
      },
    },
  },
  {
    actors: {
      checkTirePressure: fromPromise(vital100("checkTirePressure")),
      checkOilPressure: fromPromise(vital100("checkOilPressure")),
      checkCoolantLevel: fromPromise(vital100("checkCoolantLevel")),
      checkBattery: fromPromise(vital100("checkBattery")),
    },
  },
);
export const checkCarVitals = createMachine(
  {
    id: "checkcarvitals",
    initial: "WhenCarIsOn",
    states: {
      WhenCarIsOn: {
        on: {
          CarTurnedOnEvent: "DoCarVitalChecks",
        },
      },
      DoCarVitalChecks: {
        invoke: {
          src: "vitalscheck",
          onDone: {
            actions: ({ event }) => {
              console.log("Done with vitals check", event.output);
            },
            target: "CheckContinueVitalChecks",
          },
        },
      },
      CheckContinueVitalChecks: {
        after: {
          1000: "DoCarVitalChecks",
        },
      },
    },
    on: {
      CarTurnedOffEvent: {
        actions: log("Car turned off"),
        target: ".WhenCarIsOn",
      },
    },
  },
  {
    actors: {
      vitalscheck: vitalsWorkflow,
    },
  },
);

// examples/workflow-event-based/main.ts
const visaWorkflow = (name: string) => async () => {
  console.log(`${name} workflow started`);
  console.log(`${name} workflow completed`);
};
export const eventBasedSwitch = setup({
  delays: {
    visaDecisionTimeout: 1000,
  },
  actors: {
    handleApprovedVisaWorkflowID: fromPromise(visaWorkflow("handleApprovedVisaWorkflowID")),
    handleRejectedVisaWorkflowID: fromPromise(visaWorkflow("handleRejectedVisaWorkflowID")),
    handleNoVisaDecisionWorkflowId: fromPromise(visaWorkflow("handleNoVisaDecisionWorkflowId")),
  },
}).createMachine({
  id: "eventbasedswitchstate",
  initial: "CheckVisaStatus",
  states: {
    CheckVisaStatus: {
      on: {
        visaApprovedEvent: "HandleApprovedVisa",
        visaRejectedEvent: "HandleRejectedVisa",
      },
      after: {
        visaDecisionTimeout: "HandleNoVisaDecision",
      },
    },
    HandleApprovedVisa: {
      invoke: {
        src: "handleApprovedVisaWorkflowID",
        onDone: "End",
      },
    },
    HandleRejectedVisa: {
      invoke: {
        src: "handleRejectedVisaWorkflowID",
        onDone: "End",
      },
    },
    HandleNoVisaDecision: {
      invoke: {
        src: "handleNoVisaDecisionWorkflowId",
        onDone: "End",
      },
    },
    End: {
      type: "final",
    },
  },
});
const visaEffects = {
  handleApprovedVisaWorkflowID: promiseEffect(visaWorkflow("handleApprovedVisaWorkflowID")),
  handleRejectedVisaWorkflowID: promiseEffect(visaWorkflow("handleRejectedVisaWorkflowID")),
  handleNoVisaDecisionWorkflowId: promiseEffect(visaWorkflow("handleNoVisaDecisionWorkflowId")),
};

export const corpus: CorpusMachine[] = [
  {
    name: "workflow-monitor-patient",
    source: "examples/workflow-monitor-patient/main.ts",
    machine: patientVitalsWorkflow,
    input: { patientId: "patient1" },
    steps: [
      { send: vital("org.monitor.highBodyTemp") },
      { send: vital("org.monitor.highBloodPressure") },
      { send: vital("org.monitor.highRespirationRate") },
      { send: vital("org.monitor.highBodyTemp") },
    ],
    changes: [
      "the example sends one of the three events at random every 3 s with `time: new Date().toISOString()`: the entry sends each in turn, then the first again, with a fixed time",
    ],
    features: ["actions", "input"],
  },
  {
    name: "workflow-purchase-order-deadline",
    source: "examples/workflow-purchase-order-deadline/main.ts",
    machine: order,
    steps: [
      { send: { type: "OrderCreatedEvent" } },
      { advance: 10_000 },
      { send: { type: "OrderConfirmedEvent" } },
      { advance: 10_000, until: done, untilText: "done (the 15 s deadline cancels the order)" },
      { send: { type: "ShipmentSentEvent" } },
    ],
    effects: { CancelOrder: promiseEffect(cancelOrder) },
    changes: [
      "the cockatiel retry policy (unused by the machine) left out; CancelOrder's `await delay(1000)` removed; CancelOrder registered for loomwork under its name",
    ],
    features: ["after", "actions", "invoke promise", "final"],
  },
  {
    name: "workflow-check-inbox",
    source: "examples/workflow-check-inbox/main.ts",
    machine: checkInbox,
    steps: [
      {
        advance: 2_000,
        until: (s) => s.matches("Idle") && (s.context as { messages: unknown[] }).messages.length === 2,
        untilText: "Idle with two messages",
      },
      { advance: 2_000, until: (s) => s.matches("Idle"), untilText: "Idle again" },
    ],
    effects: {
      checkInboxFunction: promiseEffect(checkInboxFunction),
      sendTextsFunction: promiseEffect(sendTextsFunction),
    },
    changes: [
      "the schedule callback's setInterval runs on the harness's clock (harnessTimers.setInterval); the promise bodies' `await delay(ms)` removed; the two promise actors registered for loomwork under their names",
    ],
    features: ["callback", "invoke promise", "assign"],
  },
  {
    name: "workflow-car-vitals",
    source: "examples/workflow-car-vitals/main.ts",
    machine: checkCarVitals,
    steps: [
      { advance: 1_000 },
      {
        send: { type: "CarTurnedOnEvent" },
        until: (s) => s.matches("CheckContinueVitalChecks"),
        untilText: "CheckContinueVitalChecks",
      },
      { advance: 6_000 },
      { send: { type: "CarTurnedOffEvent" } },
    ],
    effects: {
      checkTirePressure: promiseEffect(vital100("checkTirePressure")),
      checkOilPressure: promiseEffect(vital100("checkOilPressure")),
      checkCoolantLevel: promiseEffect(vital100("checkCoolantLevel")),
      checkBattery: promiseEffect(vital100("checkBattery")),
    },
    changes: [
      "the child machine's promise actors registered for loomwork under their names",
      "the child machine's promise bodies' `await delay(ms)` (random failure with probability 0) removed; the child machine is invoked by name as in the example, nothing registered for loomwork (a child machine is not a promise actor)",
    ],
    features: ["invoke machine", "invoke promise", "onDone", "after", "actions", "log", "assign", "final"],
  },
  {
    name: "workflow-event-based",
    source: "examples/workflow-event-based/main.ts",
    machine: eventBasedSwitch,
    steps: [{ send: { type: "visaApprovedEvent" }, until: done, untilText: "done" }],
    effects: visaEffects,
    changes: [
      "the promise bodies' 1 s setTimeout removed; the three promise actors registered for loomwork under their names",
    ],
    features: ["after", "invoke promise", "final"],
  },
  {
    name: "workflow-event-based/no-decision",
    source: "examples/workflow-event-based/main.ts",
    machine: eventBasedSwitch,
    steps: [{ advance: 1_000, until: done, untilText: "done (the visa decision timeout)" }],
    effects: visaEffects,
    changes: [
      "the same machine with no event sent: its `visaDecisionTimeout` fires (the example's other path); the promise bodies' 1 s setTimeout removed; promise actors registered under their names",
    ],
    features: ["after", "invoke promise", "final"],
  },
];
