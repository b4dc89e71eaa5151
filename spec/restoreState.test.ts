// A runtime state persisted and restored (planner.ts persistState / restoreState): the machine snapshot a
// resume rebuilds equals the one XState's own restore gives, whether or not its context held actor refs
// (a context without any is restored as read, not walked: actors/journal/machineSnapshot.ts).
import {
  assign,
  createActor,
  createMachine,
  fromPromise,
  setup,
  type AnyMachineSnapshot,
  type AnyStateMachine,
} from "xstate";
import { describe, expect, it } from "vitest";
import { persistState, restoreState, type RuntimeState } from "../actors/journal/planner.js";
import { Counters } from "../actors/journal/counters.js";
import { pureTransition } from "../actors/pureTransition.js";

const runtime = (snapshot: AnyMachineSnapshot): RuntimeState => ({
  snapshot,
  pending: {},
  timers: {},
  counters: Counters.empty.with("a", 2),
  status: "running",
});

// What a store hands back: the persisted state through its JSON text.
const stored = (machine: AnyStateMachine, snapshot: AnyMachineSnapshot): unknown =>
  JSON.parse(JSON.stringify(persistState(machine, runtime(snapshot))));

// XState's own restore of the same persisted machine snapshot (what restoreState did before).
const byXState = (machine: AnyStateMachine, persisted: unknown): AnyMachineSnapshot =>
  createActor(machine, { snapshot: structuredClone((persisted as { machine: never }).machine) }).getSnapshot();

const facts = (s: AnyMachineSnapshot) => ({
  value: s.value,
  context: s.context,
  status: s.status,
  historyValue: Object.keys(s.historyValue ?? {}),
  nodes: s._nodes.map((n) => n.id),
});

describe("restoreState", () => {
  it("restores a context of plain data as read, equal to XState's restore, and marks it in the persisted state", () => {
    const machine = createMachine({
      id: "plain",
      context: {
        messages: [{ role: "user", content: [{ text: "hi" }] }],
        nested: { deep: { list: [1, 2, { x: null }] } },
      },
      initial: "a",
      states: { a: { on: { GO: "b" } }, b: { initial: "b1", states: { b1: {}, hist: { type: "history" } } } },
    });
    const actor = createActor(machine).start();
    actor.send({ type: "GO" });
    const persisted = stored(machine, actor.getSnapshot());
    expect(persisted).toMatchObject({ plainContext: true, counters: { a: 2 } });
    const restored = restoreState(machine, persisted);
    expect(facts(restored.snapshot)).toEqual(facts(byXState(machine, persisted)));
    expect(restored.snapshot.matches("b")).toBe(true);
    expect(restored.snapshot.can({ type: "GO" })).toBe(false);
    expect(restored.counters.get("a")).toBe(2);
    // The restored snapshot transitions like XState's.
    const [next] = pureTransition(machine, restored.snapshot, { type: "GO" });
    const [viaXState] = pureTransition(machine, byXState(machine, persisted), { type: "GO" });
    expect(facts(next)).toEqual(facts(viaXState));
  });

  it("still revives a context that held an actor ref (XState's restore), and restores a state persisted without the mark", () => {
    const machine = setup({ actors: { job: fromPromise(async () => 1) } }).createMachine({
      id: "refs",
      context: ({ spawn }) => ({ job: spawn("job", { id: "job" }), note: { text: "kept" } }),
      initial: "idle",
      states: { idle: {} },
    });
    const actor = createActor(machine).start();
    const persisted = stored(machine, actor.getSnapshot());
    expect(persisted).not.toHaveProperty("plainContext");
    const restored = restoreState(machine, persisted);
    expect(facts(restored.snapshot)).toEqual(facts(byXState(machine, persisted)));
    // The persisted state has no children (the runtime's effects are its pending steps): the ref revives to nothing, as before.
    expect(restored.snapshot.context).toEqual({ job: undefined, note: { text: "kept" } });
    actor.stop();

    // A snapshot written before the mark existed: XState's restore, as it always was.
    const plain = createMachine({ id: "old", context: { n: 1, list: [{ a: 1 }] }, initial: "s", states: { s: {} } });
    const old = stored(plain, createActor(plain).getSnapshot()) as Record<string, unknown>;
    delete old.plainContext;
    expect(facts(restoreState(plain, old).snapshot)).toEqual(facts(byXState(plain, old)));
  });

  it("restores with assign-built contexts the way the live run holds them", () => {
    const machine = createMachine({
      id: "counting",
      context: { n: 0, log: [] as number[] },
      initial: "on",
      states: {
        on: {
          on: { INC: { actions: assign(({ context }) => ({ n: context.n + 1, log: [...context.log, context.n] })) } },
        },
      },
    });
    const actor = createActor(machine).start();
    for (let i = 0; i < 3; i++) actor.send({ type: "INC" });
    const restored = restoreState(machine, stored(machine, actor.getSnapshot()));
    expect(restored.snapshot.context).toEqual({ n: 3, log: [0, 1, 2] });
    actor.stop();
  });
});
