// Two apps writing one execution: exactly one wins, the other gets ConcurrencyError, the log never forks.
import { describe, expect, it } from "vitest";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { ConcurrencyError } from "../stores/errors.js";
import { memoryStores } from "../stores/memory.js";
import { demoMachine } from "./support/demoMachine.js";
import { countedDemoEffects } from "./support/harness.js";

describe("two writers", () => {
  it("lets exactly one append win; the other gets ConcurrencyError and the log is intact", async () => {
    const stores = memoryStores();
    const { effects } = countedDemoEffects();
    const app1 = createApp(defineConfig({ stores, effects }));
    const actor1 = await app1.start(demoMachine, { executionId: "r", input: { topic: "t" } });
    await actor1.settled();
    const app2 = createApp(defineConfig({ stores, effects, logics: [demoMachine] }));
    const actor2 = await app2.resume("r");
    const results = await Promise.allSettled([
      actor1.sendAsync({ type: "APPROVE" }),
      actor2.sendAsync({ type: "REJECT" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const loser = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(loser.reason).toBeInstanceOf(ConcurrencyError);
    expect(loser.reason).toMatchObject({ executionId: "r" });
    await Promise.all([actor1.settled(), actor2.settled()]);
    const log = await stores.events.read("r");
    expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
    expect(log.filter((r) => r.type === "loom.event.received")).toHaveLength(1);
    const app3 = createApp(defineConfig({ stores, effects, logics: [demoMachine] }));
    await (await app3.resume("r")).settled();
    expect(await app3.result("r")).toBeDefined();
  });
});
