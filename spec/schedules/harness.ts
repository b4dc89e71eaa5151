// What the schedule tests share: two machines (one that ends at once, one that waits for DONE), an app over given
// stores on a simulated clock, and a way to move the clock to a tick once the runner has armed its timer.
import { expect, vi } from "vitest";
import { setup } from "xstate";
import { createApp, type App } from "../../actors/app.js";
import type { SimulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import type { Stores } from "../../stores/types.js";

export const quick = setup({}).createMachine({ id: "quick", initial: "done", states: { done: { type: "final" } } });
export const slow = setup({}).createMachine({
  id: "slow",
  initial: "working",
  states: { working: { on: { DONE: "done" } }, done: { type: "final" } },
});

export const WAIT = { timeout: 15_000, interval: 5 };

export function appOn(stores: Stores, clock: SimulatedClock): App {
  return createApp(defineConfig({ stores, effects: {}, clock, logics: [quick, slow] }));
}

/** The ids of the executions a schedule started, in order. */
export async function tickIds(app: App, scheduleId: string): Promise<string[]> {
  return (await app.executions()).map((e) => e.executionId).filter((id) => id.startsWith(`sched:${scheduleId}:`));
}

/** Waits until the runner has looked and armed its timer (the only timer of these machines' apps). */
export async function armed(clock: SimulatedClock): Promise<void> {
  await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1), WAIT);
}

/** Moves the clock to `at` (once the runner armed its timer), firing what is due. */
export async function advanceTo(clock: SimulatedClock, at: number): Promise<void> {
  await armed(clock);
  clock.advance(at - clock.now());
}

export const iso = (at: number | string) => new Date(at).toISOString();
