// The sentinel preset: the classic middleware's second consumer, for telemetry from task steps.
import { describe, expect, it } from "vitest";
import { setup } from "xstate";
import { createApp } from "../../actors/app.js";
import { resolveClaimCheck } from "../../actors/effects/claimCheck.js";
import { defineConfig } from "../../actors/config.js";
import { createTaskEffect, createToolEffect } from "../../actors/effects/effect.js";
import { sentinelClaimCheck } from "../../actors/effects/sentinel.js";
import { effectActor } from "../../machines/helpers/effectActor.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED } from "../../stores/schema.js";

const dump = { trace: "x".repeat(20_000) };

describe("sentinelClaimCheck", () => {
  it("offloads a large task result as reclaimable telemetry (no retain) and leaves tools alone", async () => {
    const stores = memoryStores();
    const machine = setup({ actors: { crawl: effectActor(), lookup: effectActor() } }).createMachine({
      id: "flow",
      initial: "a",
      states: {
        a: { invoke: { src: "crawl", id: "crawl", onDone: "b" } },
        b: { invoke: { src: "lookup", id: "lookup", onDone: "c" } },
        c: { type: "final" },
      },
    });
    const app = createApp(
      defineConfig({
        stores,
        effects: { crawl: createTaskEffect(async () => dump), lookup: createToolEffect(async () => dump) },
        execution: { effectMiddleware: [sentinelClaimCheck({ store: stores.content })] },
      }),
    );
    await app.start(machine, { executionId: "f" });
    await app.result("f");
    const [crawl, lookup] = (await app.log("f")).filter((r) => r.type === STEP_COMPLETED).map((r) => r.output);
    expect(crawl).toMatchObject({ __loomClaimCheck: 1, size: 20_012 });
    expect(crawl).not.toHaveProperty("retain");
    expect(await resolveClaimCheck(crawl, { store: stores.content })).toEqual(dump);
    expect(lookup).toEqual(dump);
  });
});
