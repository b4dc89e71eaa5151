// A log that no longer matches the machine fails resume loudly, with the facts.
import { describe, expect, it } from "vitest";
import { createApp } from "../actors/app.js";
import { simulatedClock } from "../actors/clock.js";
import { defineConfig } from "../actors/config.js";
import { NonDeterminismError } from "../actors/errors.js";
import { memoryStores } from "../stores/memory.js";
import type { StoredRecord } from "../stores/types.js";
import { demoMachine } from "./support/demoMachine.js";
import { countedDemoEffects } from "./support/harness.js";

async function recordedLog(): Promise<StoredRecord[]> {
  const stores = memoryStores();
  const clock = simulatedClock(0);
  const { effects } = countedDemoEffects();
  const app = createApp(defineConfig({ stores, effects, clock, execution: { snapshotEvery: false } }));
  const actor = await app.start(demoMachine, { executionId: "r", input: { topic: "t" } });
  await actor.settled();
  await actor.sendAsync({ type: "APPROVE" });
  await app.result("r");
  return stores.events.read("r");
}

async function resumeTampered(log: StoredRecord[]) {
  const stores = memoryStores();
  await stores.events.append("r", 0, log.map((r, i) => ({ ...r, seq: i + 1 })));
  const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects, logics: [demoMachine] }));
  return app.resume("r");
}

describe("NonDeterminismError", () => {
  it("names execution, seq, expected and actual when a step id was changed", async () => {
    const log = await recordedLog();
    const i = log.findIndex((r) => r.stepId === "demo#write:1");
    log[i] = { ...log[i]!, stepId: "demo#write:9" };
    const error = await resumeTampered(log).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonDeterminismError);
    expect(error).toMatchObject({ executionId: "r", seq: i + 1, expected: "demo#write:9", actual: { pendingSteps: ["demo#write:1"] } });
    expect((error as Error).message).toContain('Execution "r" diverged from its log at seq');
  });

  it("fails when a record was removed", async () => {
    const log = await recordedLog();
    const i = log.findIndex((r) => r.type === "loom.event.received");
    log.splice(i, 1);
    const error = await resumeTampered(log).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonDeterminismError);
    expect((error as NonDeterminismError).seq).toBe(i + 1);
  });

  it("fails when a TRANSITION no longer matches what the machine does", async () => {
    const log = await recordedLog();
    const i = log.findIndex((r) => r.type === "loom.transition" && r.to === "writing");
    log[i] = { ...log[i]!, to: "published" };
    const error = (await resumeTampered(log).catch((e: unknown) => e)) as NonDeterminismError;
    expect(error).toBeInstanceOf(NonDeterminismError);
    expect(error.expected).toMatchObject({ to: "published" });
    expect(error.actual).toMatchObject({ to: "writing" });
    expect(error.seq).toBe(i + 1);
  });

  it("fails when the machine changed under an old log", async () => {
    const log = await recordedLog();
    const changed = demoMachine.provide({}).config;
    const { createMachine } = await import("xstate");
    const edited = createMachine({ ...(changed as object), id: "demo", initial: "waiting" } as never);
    const stores = memoryStores();
    await stores.events.append("r", 0, log);
    const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
    await expect(app.resume("r", edited)).rejects.toBeInstanceOf(NonDeterminismError);
  });
});
