// Custom actions, log() and emit on a journaled execution (issue 33, ADR 0012 D7): they run as XState runs them,
// once, when a transition happens live, after its macrostep is durable; never again on replay or resume.
import { describe, expect, it } from "vitest";
import { assign, createActor, emit, log, setup } from "xstate";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { memoryStores } from "../stores/memory.js";
import type { StoredRecord } from "../stores/types.js";
import { EXECUTION_ENDED, TRANSITION } from "../stores/schema.js";
import { ForwardingEventStore, withEvents } from "./support/harness.js";

/** Records the types of every record once its append resolved (what is durable). */
class WatchedEvents extends ForwardingEventStore {
  readonly durable: string[] = [];
  override async append(id: string, expected: number, records: StoredRecord[]) {
    const out = await this.inner.append(id, expected, records);
    this.durable.push(...records.map((r) => r.type));
    return out;
  }
}

function machineWith(ran: string[], durable: () => string[]) {
  return setup({
    actions: {
      note: ({ context }, params: { label: string }) => {
        // The macrostep's TRANSITION is already durable when an action of it runs.
        ran.push(`${params.label}:${context.count}:${durable().filter((t) => t === TRANSITION).length}`);
      },
    },
  }).createMachine({
    id: "acts",
    context: { count: 0 },
    initial: "idle",
    entry: { type: "note", params: { label: "entry" } },
    states: {
      idle: {
        on: {
          GO: {
            target: "busy",
            actions: [
              assign({ count: ({ context }) => context.count + 1 }),
              { type: "note", params: { label: "go" } },
              emit(({ context }) => ({ type: "went", count: context.count })),
            ],
          },
        },
      },
      busy: { on: { BACK: { target: "idle", actions: [log("back"), emit({ type: "back" })] } } },
    },
  });
}

describe("custom actions and log()", () => {
  it("run once, live, after their macrostep is durable, in XState's order; never again on resume", async () => {
    const stores = memoryStores();
    const events = new WatchedEvents(stores.events);
    const ran: string[] = [];
    const machine = machineWith(ran, () => events.durable);
    const app = createApp(defineConfig({ effects: {}, stores: withEvents(stores, events) }));
    const actor = await app.start(machine, { executionId: "a1" });
    expect(ran).toEqual(["entry:0:1"]);
    await actor.sendAsync({ type: "GO" });
    expect(ran).toEqual(["entry:0:1", "go:1:2"]);

    // On plain XState the same machine runs the same actions.
    const xRan: string[] = [];
    const x = createActor(machineWith(xRan, () => [TRANSITION, TRANSITION].slice(0, xRan.length + 1))).start();
    x.send({ type: "GO" });
    expect(xRan).toEqual(ran);
    await app.close();

    const app2 = createApp(defineConfig({ effects: {}, stores: withEvents(stores, events), logics: [machine] }));
    const resumed = await app2.resume("a1");
    expect(resumed.getSnapshot().value).toBe("busy");
    expect(ran).toHaveLength(2); // nothing re-ran on replay
    await resumed.sendAsync({ type: "BACK" });
    await resumed.sendAsync({ type: "GO" });
    expect(ran.at(-1)).toBe("go:2:4");
    await app2.close();
  });

  it("log() writes through console.log (XState's default logger), once per live transition", async () => {
    const lines: unknown[][] = [];
    const saved = console.log;
    console.log = (...args: unknown[]) => void lines.push(args);
    try {
      const app = createApp(defineConfig({ effects: {}, stores: memoryStores() }));
      const actor = await app.start(
        machineWith([], () => []),
        { executionId: "l1" },
      );
      await actor.sendAsync({ type: "GO" });
      await actor.sendAsync({ type: "BACK" });
      await app.close();
    } finally {
      console.log = saved;
    }
    expect(lines).toEqual([["back"]]);
  });

  it("an action that throws ends the execution in error as XState's actor does (the state before the transition), journaled", async () => {
    const machine = setup({}).createMachine({
      id: "thrower",
      context: { n: 0 },
      initial: "a",
      states: {
        a: {
          on: {
            GO: {
              target: "b",
              actions: [
                assign({ n: 1 }),
                () => {
                  throw new Error("boom");
                },
              ],
            },
          },
        },
        b: {},
      },
    });
    const x = createActor(machine);
    x.subscribe({ error: () => undefined });
    x.start();
    x.send({ type: "GO" });
    const xs = x.getSnapshot();

    const stores = memoryStores();
    const app = createApp(defineConfig({ effects: {}, stores }));
    const actor = await app.start(machine, { executionId: "t1" });
    const failed = app.result("t1").catch((e: unknown) => e);
    await actor.sendAsync({ type: "GO" });
    const s = actor.getSnapshot();
    expect([s.status, s.value, s.context]).toEqual([xs.status, xs.value, xs.context]);
    expect((s.error as Error).message).toBe("boom");
    expect(await failed).toMatchObject({ name: "ExecutionFailedError" });
    const log = await app.log("t1");
    expect(log.at(-1)).toMatchObject({ type: EXECUTION_ENDED, status: "error", error: { message: "boom" } });
    await app.close();

    const app2 = createApp(defineConfig({ effects: {}, stores, logics: [machine] }));
    const resumed = await app2.resume("t1");
    const r = resumed.getSnapshot();
    expect([r.status, r.value, r.context]).toEqual([xs.status, xs.value, xs.context]);
    await app2.close();
  });
});

describe("emit and actor.on", () => {
  it("delivers emitted events of live transitions to `on(type)` and `on('*')`, after the macrostep is durable; replay does not re-emit", async () => {
    const stores = memoryStores();
    const app = createApp(defineConfig({ effects: {}, stores }));
    const machine = machineWith([], () => []);
    const actor = await app.start(machine, { executionId: "e1" });
    const typed: unknown[] = [];
    const all: string[] = [];
    const sub = actor.on("went", (e) => void typed.push(e));
    actor.on("*", (e) => void all.push(e.type));
    await actor.sendAsync({ type: "GO" });
    await actor.sendAsync({ type: "BACK" });
    sub.unsubscribe();
    await actor.sendAsync({ type: "GO" });
    expect(typed).toEqual([{ type: "went", count: 1 }]);
    expect(all).toEqual(["went", "back", "went"]);
    await app.close();

    const app2 = createApp(defineConfig({ effects: {}, stores, logics: [machine] }));
    const resumed = await app2.resume("e1");
    const again: string[] = [];
    resumed.on("*", (e) => void again.push(e.type));
    await resumed.settled();
    expect(again).toEqual([]);
    await resumed.sendAsync({ type: "BACK" });
    expect(again).toEqual(["back"]);
    await app2.close();
  });
});
