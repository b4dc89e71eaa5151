// The tree the fleet's crash campaign for children runs (spec/postgres/treeCrash.test.ts, worker processes of
// spec/postgres/treeWorker.ts): a parent that does an effect, then runs two children at once, each doing an effect,
// telling the parent (sendParent) and waiting for its ACK (sendTo): a spawn, two ends and messages both ways.
import { assign, fromPromise, sendParent, sendTo, setup } from "xstate";
import { EVENT_RECEIVED, EXECUTION_ENDED, EXECUTION_STARTED, STEP_COMPLETED } from "../../stores/schema.js";
import { CHILD_EFFECT_ID } from "../../actors/journal/children.js";

export const kid = setup({
  types: {
    input: {} as { name: string; n: number },
    context: {} as { name: string; n: number; worked?: number },
    events: {} as { type: "ACK" },
  },
  actors: { work: fromPromise(async ({ input }: { input: number }) => input * 10) },
}).createMachine({
  id: "kid",
  context: ({ input }) => ({ name: input.name, n: input.n }),
  initial: "working",
  states: {
    working: {
      invoke: {
        id: "work",
        src: "work",
        input: ({ context }) => context.n,
        onDone: {
          target: "told",
          actions: [
            assign({ worked: ({ event }) => event.output as number }),
            sendParent(({ context, event }) => ({ type: "WORKED", name: context.name, value: event.output as number })),
          ],
        },
      },
    },
    told: { on: { ACK: "done" } },
    done: { type: "final" },
  },
  output: ({ context }) => ({ name: context.name, worked: context.worked }),
});

type Out = { name: string; worked: number };
type TreeContext = { base: number; worked: Record<string, number>; outs: Out[] };

export const tree = setup({
  types: {
    input: {} as { base: number },
    context: {} as TreeContext,
    events: {} as { type: "WORKED"; name: string; value: number },
  },
  actors: { kid, prep: fromPromise(async ({ input }: { input: number }) => input + 1) },
}).createMachine({
  id: "tree",
  context: ({ input }) => ({ base: input.base, worked: {}, outs: [] }),
  initial: "prep",
  states: {
    prep: {
      invoke: {
        id: "prep",
        src: "prep",
        input: ({ context }) => context.base,
        onDone: { target: "fan", actions: assign({ base: ({ event }) => event.output as number }) },
      },
    },
    fan: {
      type: "parallel",
      states: {
        a: {
          initial: "run",
          states: {
            run: {
              invoke: {
                id: "a",
                src: "kid",
                input: ({ context }) => ({ name: "a", n: context.base }),
                onDone: {
                  target: "end",
                  actions: assign({ outs: ({ context, event }) => [...context.outs, event.output as Out] }),
                },
              },
            },
            end: { type: "final" },
          },
        },
        b: {
          initial: "run",
          states: {
            run: {
              invoke: {
                id: "b",
                src: "kid",
                input: ({ context }) => ({ name: "b", n: context.base + 1 }),
                onDone: {
                  target: "end",
                  actions: assign({ outs: ({ context, event }) => [...context.outs, event.output as Out] }),
                },
              },
            },
            end: { type: "final" },
          },
        },
      },
      on: {
        WORKED: {
          actions: [
            assign({ worked: ({ context, event }) => ({ ...context.worked, [event.name]: event.value }) }),
            sendTo(({ event }) => event.name, { type: "ACK" }),
          ],
        },
      },
      onDone: "joined",
    },
    joined: { type: "final" },
  },
  output: ({ context }) => ({
    worked: context.worked,
    outs: [...context.outs].sort((x, y) => x.name.localeCompare(y.name)),
  }),
});

/** The output of a tree run with input `{ base }`, whatever crashed on the way. */
export function treeOutput(base: number) {
  const a = (base + 1) * 10;
  const b = (base + 2) * 10;
  return {
    worked: { a, b },
    outs: [
      { name: "a", worked: a },
      { name: "b", worked: b },
    ],
  };
}

/** A point at which the worker that reaches it SIGKILLs itself: before or after the append of `executionId` that holds a record matching. */
export interface KillPoint {
  name: string;
  when: "before" | "after";
  executionId: string;
  type: string;
  effectId?: string;
  eventType?: string;
}

/** The campaign's points, for a tree whose root id is `root` (one point a tree). */
export const killPoints = {
  /** The parent's spawn record is durable (its TRANSITION planned the child step), the child's start not yet. */
  spawn: (root: string): KillPoint => ({
    name: "spawn",
    when: "before",
    executionId: `${root}/a`,
    type: EXECUTION_STARTED,
  }),
  /** Mid-child: the child's effect outcome is durable, and the WORKED it planned is in its outbox, undelivered. */
  midChild: (root: string): KillPoint => ({
    name: "mid-child",
    when: "after",
    executionId: `${root}/a`,
    type: STEP_COMPLETED,
    effectId: "work",
  }),
  /** The parent journaled WORKED: the ACK it planned is in its outbox, undelivered. */
  parentOutbox: (root: string): KillPoint => ({
    name: "parent-outbox",
    when: "after",
    executionId: root,
    type: EVENT_RECEIVED,
    eventType: "WORKED",
  }),
  /** The child's end is durable; the parent's outcome of it not yet. */
  childEnd: (root: string): KillPoint => ({
    name: "child-end",
    when: "after",
    executionId: `${root}/b`,
    type: EXECUTION_ENDED,
  }),
  /** The parent is about to journal a child's outcome (the child ended long before). */
  beforeOutcome: (root: string): KillPoint => ({
    name: "before-outcome",
    when: "before",
    executionId: root,
    type: STEP_COMPLETED,
    effectId: CHILD_EFFECT_ID,
  }),
};

/** True when `records` (of `executionId`) hold the record `point` names. */
export function matches(point: KillPoint, executionId: string, records: readonly Record<string, unknown>[]): boolean {
  return (
    point.executionId === executionId &&
    records.some(
      (r) =>
        r.type === point.type &&
        (point.effectId === undefined || r.effectId === point.effectId) &&
        (point.eventType === undefined ||
          (typeof r.event === "object" &&
            r.event !== null &&
            (r.event as { type?: unknown }).type === point.eventType)),
    )
  );
}
