// app.resumeUnfinished(): at boot, every execution the catalogue lists as running is resumed; the ones that
// cannot be (their logic unknown to this app) are reported with their error, and nothing is thrown.
import { describe, expect, it } from "vitest";
import { createMachine } from "xstate";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { ConfigError } from "../actors/errors.js";
import { memoryStores } from "../stores/memory.js";
import { demoMachine } from "./support/demoMachine.js";
import { countedDemoEffects } from "./support/harness.js";

// Waits for an event, so an execution of it stays running across a restart.
const waiting = createMachine({
  id: "waiting",
  initial: "idle",
  states: { idle: { on: { GO: "done" } }, done: { type: "final" } },
});

describe("app.resumeUnfinished", () => {
  it("resumes every running execution, serving recorded steps from the log, and reports the ones it cannot", async () => {
    const stores = memoryStores();
    const first = countedDemoEffects();
    const app1 = createApp(defineConfig({ stores, effects: first.effects }));
    for (const id of ["a-2", "a-10", "a-1"])
      await (await app1.start(demoMachine, { executionId: id, input: { topic: id } })).settled();
    const done = await app1.start(demoMachine, { executionId: "finished", input: { topic: "t" } });
    await done.settled();
    await done.sendAsync({ type: "APPROVE" });
    await app1.result("finished");
    await (await app1.start(waiting, { executionId: "other-logic" })).settled();
    await app1.close();

    const second = countedDemoEffects();
    const app2 = createApp(defineConfig({ stores, effects: second.effects, logics: [demoMachine] }));
    const { resumed, failed } = await app2.resumeUnfinished({ concurrency: 2 });
    expect(resumed.map((actor) => actor.id).sort()).toEqual(["a-1", "a-10", "a-2"]);
    expect(resumed.every((actor) => actor.replay.stepsServedFromLog > 0)).toBe(true);
    expect(second.runs.size).toBe(0);
    expect(failed.map((f) => f.executionId)).toEqual(["other-logic"]);
    expect(failed[0]!.error).toMatchObject({ message: expect.stringContaining("waiting") });
    // They run on: each finishes once approved.
    for (const actor of resumed) await actor.sendAsync({ type: "APPROVE" });
    for (const actor of resumed) await expect(app2.result(actor.id)).resolves.toBeDefined();
    await app2.close();
  });

  it("resumes only what the filter keeps, and refuses bad options with ConfigError", async () => {
    const stores = memoryStores();
    const app1 = createApp(defineConfig({ stores, effects: {} }));
    for (const id of ["keep-1", "skip-1"]) await (await app1.start(waiting, { executionId: id })).settled();
    await app1.close();
    const app2 = createApp(defineConfig({ stores, effects: {}, logics: [waiting] }));
    const { resumed, failed } = await app2.resumeUnfinished({ filter: (info) => info.executionId.startsWith("keep") });
    expect(resumed.map((actor) => actor.id)).toEqual(["keep-1"]);
    expect(failed).toEqual([]);
    await expect(app2.resumeUnfinished({ concurrency: 0 })).rejects.toBeInstanceOf(ConfigError);
    await expect(app2.resumeUnfinished({ filter: "keep" as never })).rejects.toMatchObject({
      path: "resumeUnfinished.filter",
    });
    await app2.close();
  });
});
