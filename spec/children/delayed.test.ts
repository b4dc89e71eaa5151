// A delayed sendTo to a child execution or a live source (issue 33): XState delivers it after the delay; under the
// runtime it is a timer of the sender (journaled TIMER_SET with its receiver), and its firing is a message of the tree,
// exactly once, through the sender's outbox. A resume re-arms it; cancel() disarms it as any delayed event.
import { describe, expect, it } from "vitest";
import { assign, cancel, createActor, fromCallback, sendParent, sendTo, setup } from "xstate";
import { createApp } from "../../actors/app.js";
import { simulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import { memoryStores } from "../../stores/memory.js";
import { EVENT_RECEIVED, TIMER_SET } from "../../stores/schema.js";

const echo = setup({}).createMachine({
  id: "echo",
  initial: "waiting",
  states: {
    waiting: { on: { PING: { target: "done", actions: sendParent({ type: "PONG" }) } } },
    done: { type: "final" },
  },
});

const caller = setup({
  actors: { echo },
  types: { context: {} as { pongs: number } },
}).createMachine({
  id: "caller",
  context: { pongs: 0 },
  initial: "calling",
  states: {
    calling: {
      invoke: { id: "e", src: "echo", onDone: "finished" },
      entry: sendTo("e", { type: "PING" }, { delay: 1000, id: "ping" }),
      on: {
        PONG: { actions: assign({ pongs: ({ context }) => context.pongs + 1 }) },
        CANCEL: { actions: cancel("ping") },
      },
    },
    finished: { type: "final" },
  },
  output: ({ context }) => context,
});

async function until(predicate: () => boolean | Promise<boolean>): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > 10_000) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe("a delayed sendTo", () => {
  it("reaches a child execution after its delay, exactly once, as on XState", async () => {
    const live = createActor(caller).start();
    await until(() => live.getSnapshot().status === "done");
    expect(live.getSnapshot().output).toEqual({ pongs: 1 });

    const clock = simulatedClock(0);
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: {}, clock }));
    await app.start(caller, { executionId: "d" });
    const set = (await app.log("d")).find((r) => r.type === TIMER_SET);
    expect(set).toMatchObject({ timerId: "ping", dueAt: 1000, to: "d/e" });
    clock.advance(999);
    expect((await app.log("d/e")).some((r) => r.type === EVENT_RECEIVED)).toBe(false);
    clock.advance(1);
    expect(await app.result("d")).toEqual({ pongs: 1 });
    const pings = (await app.log("d/e")).filter((r) => r.type === EVENT_RECEIVED && r.event.type === "PING");
    expect(pings).toEqual([expect.objectContaining({ from: { executionId: "d", messageId: expect.any(String) } })]);
    await app.close();
  });

  it("is re-armed by a resume and fires once; cancel() disarms it", async () => {
    const clock = simulatedClock(0);
    const stores = memoryStores();
    const first = createApp(defineConfig({ stores, effects: {}, clock }));
    await first.start(caller, { executionId: "r" });
    await first.close();
    const again = createApp(defineConfig({ stores, effects: {}, clock }));
    await again.resume("r", caller);
    clock.advance(1000);
    expect(await again.result("r")).toEqual({ pongs: 1 });
    await again.close();

    const other = createApp(defineConfig({ stores, effects: {}, clock }));
    const actor = await other.start(caller, { executionId: "c" });
    await actor.sendAsync({ type: "CANCEL" });
    clock.advance(5000);
    expect((await other.log("c/e")).some((r) => r.type === EVENT_RECEIVED)).toBe(false);
    expect(actor.getSnapshot().value).toBe("calling");
    await other.close();
  });

  it("reaches a live source after its delay", async () => {
    const heard: string[] = [];
    const machine = setup({
      actors: {
        ear: fromCallback(({ receive }) => {
          receive((event) => heard.push(event.type));
        }),
      },
    }).createMachine({
      id: "speaker",
      invoke: { id: "ear", src: "ear" },
      entry: sendTo("ear", { type: "LATER" }, { delay: 500 }),
    });
    const clock = simulatedClock(0);
    const app = createApp(defineConfig({ stores: memoryStores(), effects: {}, clock }));
    await app.start(machine, { executionId: "s" });
    clock.advance(499);
    expect(heard).toEqual([]);
    clock.advance(1);
    await until(() => heard.length === 1);
    expect(heard).toEqual(["LATER"]);
    await app.close();
  });
});
