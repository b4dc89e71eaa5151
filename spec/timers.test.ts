// Delayed events without ids (issue 33, ADR 0012 D7): two are two timers, as in XState; each gets a deterministic id
// (`<event type>#<n>` from the execution's counters) so a replay derives the same ids. Logs journaled before, where
// such a timer's id was its event type, replay unchanged.
import { describe, expect, it } from "vitest";
import { assign, createActor, raise, setup } from "xstate";
import { createApp } from "../actors/app.js";
import { simulatedClock } from "../actors/clock.js";
import { defineConfig } from "../actors/config.js";
import { memoryStores } from "../stores/memory.js";
import { EVENT_RECEIVED, TIMER_SET } from "../stores/schema.js";
import type { StoredRecord } from "../stores/types.js";

const pinger = (delays: number[]) =>
  setup({}).createMachine({
    id: "pinger",
    context: { pings: 0 },
    on: {
      START: { actions: delays.map((delay) => raise({ type: "PING" }, { delay })) },
      PING: { actions: assign({ pings: ({ context }) => context.pings + 1 }) },
    },
  });

describe("delayed events without ids", () => {
  it("two of one type are two timers, as in XState, with ids a replay derives again", async () => {
    const machine = pinger([100, 200]);
    const clock = simulatedClock(0);
    const x = createActor(machine).start();
    x.send({ type: "START" });
    await new Promise((resolve) => setTimeout(resolve, 250));
    const stores = memoryStores();
    const app = createApp(defineConfig({ effects: {}, stores, clock }));
    const actor = await app.start(machine, { executionId: "p1" });
    await actor.sendAsync({ type: "START" });
    const timerIds = (await app.log("p1")).filter((r) => r.type === TIMER_SET).map((r) => r.timerId);
    expect(timerIds).toEqual(["PING#1", "PING#2"]);
    clock.advance(150);
    await actor.settled();
    await app.close();

    // Resumed with one timer fired and one armed: the replay derives the same ids, and the second fires once.
    const app2 = createApp(defineConfig({ effects: {}, stores, clock, logics: [machine] }));
    const resumed = await app2.resume("p1");
    clock.advance(100);
    await resumed.settled();
    expect(resumed.getSnapshot().context).toEqual(x.getSnapshot().context);
    expect(x.getSnapshot().context).toEqual({ pings: 2 });
    await app2.close();
  });

  it("a log journaled with the old ids (the event type) replays unchanged, and its armed timer fires once after a resume", async () => {
    const machine = pinger([100]);
    const clock = simulatedClock(0);
    const stores = memoryStores();
    const app = createApp(defineConfig({ effects: {}, stores, clock }));
    const actor = await app.start(machine, { executionId: "old" });
    await actor.sendAsync({ type: "START" });
    await actor.sendAsync({ type: "START" });
    await app.close();
    // As the runtime journaled them before: a timer without an id was keyed by its event type.
    const legacy = (await stores.events.read("old")).map((r): StoredRecord => {
      if (r.type === TIMER_SET || (r.type === EVENT_RECEIVED && typeof r.timerId === "string"))
        return { ...r, timerId: "PING" };
      return r;
    });
    const oldStores = memoryStores();
    await oldStores.events.append("old", 0, legacy);
    const app2 = createApp(defineConfig({ effects: {}, stores: oldStores, clock, logics: [machine] }));
    const resumed = await app2.resume("old");
    clock.advance(500);
    await resumed.settled();
    // The old runtime's one timer (the second START re-armed it): one ping.
    expect(resumed.getSnapshot().context).toEqual({ pings: 1 });
    await resumed.sendAsync({ type: "START" });
    clock.advance(500);
    await resumed.settled();
    expect(resumed.getSnapshot().context).toEqual({ pings: 2 });
    await app2.close();

    // Replayed again from that whole log (old ids, then new ones), it agrees with itself.
    const app3 = createApp(defineConfig({ effects: {}, stores: oldStores, clock, logics: [machine] }));
    const again = await app3.resume("old");
    expect(again.getSnapshot().context).toEqual({ pings: 2 });
    await app3.close();
  });
});
